#pragma once
// The Euler step's kernels as named function objects (nvcc cannot compile generic host-device
// lambdas, and a graph node names them): each has the signature tessera::for_each passes,
// iterators by value and the time step last.
//
//   tessera::reduce(ex, state, max_speed, tessera::Max{}, euler2d::Wavespeed<double>{gas});
//   tessera::for_each(ex, euler2d::edges_only(), euler2d::ZeroGradientEdges{}, state);
//   tessera::for_each(ex, euler2d::AdvanceClock<double>{cfl, h, t_final}, tessera::read_only(max_speed),
//                     tessera::write_only(dt), time, steps, failed);      // one-site tensors
//   tessera::for_each(ex, euler2d::Sweep<0, double>{gas, h}, state, updated, tessera::uniform(dt));
//   tessera::for_each(ex, euler2d::Sweep<1, double>{gas, h}, updated, state, tessera::uniform(dt),
//                     tessera::reduce_into(max_speed, tessera::Max{}));  // and the next step's CFL maximum

#include "euler2d/force.hpp"
#include "euler2d/state.hpp"

#include <cstdint>
#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>
#include <tessera/exec/exec_options.hpp>

#include <cfloat>
#include <cstddef>

namespace euler2d {

/// max(|u| + c, |v| + c) of a cell: the map the CFL reduction folds with Max, straight from the
/// state (a wavespeed tensor written by one pass and read by the next cost 16 bytes a cell more
/// than the one read of the state that a hand-written reduction makes).
template <typename T>
struct Wavespeed {
  IdealGas<T> gas;
  template <typename StateIt>
  TESSERA_HOST_DEVICE T operator()(StateIt state) const {
    return gas.max_wavespeed(*state);
  }
};

/// Transmissive boundaries, as in Ripple: a cell on the domain's edge copies itself into the
/// padding site beyond that edge (zero gradient). Only cells on the edge write, and each writes
/// its own padding site, so blocks and lanes never write the same site. Run it with
/// edges_only(), so that the CPU does not visit every cell to find the edge ones.
struct ZeroGradientEdges {
  template <typename It>
  TESSERA_HOST_DEVICE void operator()(It it) const {
    tessera::unrolled_for<decltype(it)::dims>([&](auto d) {
      if (it.global_idx(d) == 0) *it.offset(d, -1) = *it;
      if (it.global_idx(d) == static_cast<std::int64_t>(it.global_size(d)) - 1) *it.offset(d, 1) = *it;
    });
  }
};

/// The ExecOptions of ZeroGradientEdges: it acts only on the domain's outermost cells.
inline tessera::ExecOptions edges_only() {
  tessera::ExecOptions o;
  o.edge_width = 1;
  return o;
}

/// The clock of a step, as a kernel of one site, so that it runs where the state does and no
/// step waits for the host: dt = min(cfl h / max wavespeed, t_final - t) from the maximum the
/// last y sweep reduced, then t advanced by it (to exactly t_final on the last step) and the
/// step counted. At or past t_final, dt is 0 and nothing is counted; a maximum that is not
/// positive and finite (the state has lost positivity) sets `failed`, and dt stays 0 from then on,
/// for the host to report (EulerSolver::check_clock).
template <typename T>
struct AdvanceClock {
  double cfl;
  double h;
  double t_final;
  template <typename Wavespeed, typename Dt, typename Time, typename Steps, typename Failed>
  TESSERA_HOST_DEVICE void operator()(Wavespeed wavespeed, Dt dt, Time time, Steps steps, Failed failed) const {
    const double ws = static_cast<double>(*wavespeed), t = *time;
    T step = 0;
    if (*failed == 0 && t < t_final) {
      if (!(ws > 0) || !(ws <= DBL_MAX)) {
        *failed = 1;
      } else {
        const double remaining = t_final - t, full = cfl * h / ws;
        const bool last = full >= remaining;
        step = static_cast<T>(last ? remaining : full);
        *time = last ? t_final : t + static_cast<double>(step);
        *steps = *steps + 1;
      }
    }
    *dt = step;
  }
};

/// The state a sweep stores from the updated conserved variables `q` of a cell that was
/// `before`. A step of dt = 0 (past t_final, or after a failed one) must change nothing, and its
/// update does not give the cell back (FORCE's Lax-Friedrichs flux divides by dt, and (rho u) / rho
/// need not be u): it keeps the cell it read. A select, not a branch, so the sweep loops stay
/// vectorised (a branch cost the 512^2 host step 20 % in Strided and 3.5x in Contiguous: GCC at
/// -O2 does not unswitch it out of the loop).
template <typename T, typename S>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE State<T> stepped(const Conserved<T>& q, const State<T, S>& before, T dt) {
  const bool still = dt == T(0);
  return State<T>(still ? T(before.density()) : q.rho, still ? T(before.energy()) : q.e,
                  {still ? T(before.velocity()[0]) : q.mx / q.rho, still ? T(before.velocity()[1]) : q.my / q.rho});
}

/// to = from, field by field.
template <typename To, typename From>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void copy_state(To&& to, const From& from) {
  to.density() = from.density();
  to.energy() = from.energy();
  to.velocity()[0] = from.velocity()[0];
  to.velocity()[1] = from.velocity()[1];
}

/// One first-order FORCE sweep along Dim: out = in - dt/h (F(i+1/2) - F(i-1/2)). Reads in's
/// padding along Dim, so in's boundary and halo must be loaded first. Given a reduce_into
/// contribution as well, it contributes the updated cell's max_wavespeed, computed from the
/// values it stores (so the same bits a Wavespeed pass over `out` would read): the y sweep gives
/// the next step's CFL maximum without another pass over the state.
///
///   tessera::for_each(ex, Sweep<1, double>{gas, h}, tessera::read_only(half), tessera::write_only(state),
///                     dt, tessera::reduce_into(next_max, tessera::Max{}));
template <std::size_t Dim, typename T>
struct Sweep {
  /// It reads neighbours along Dim only: the y sweep reads nothing along x.
  static constexpr std::size_t x_reach = Dim == 0 ? 1 : 0;
  IdealGas<T> gas;
  T h;  ///< cell width
  template <typename In, typename Out>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, T dt) const {
    copy_state(*out, stepped(updated(in, dt), *in, dt));
  }
  template <typename In, typename Out, typename Contribution>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, T dt, Contribution wavespeed) const {
    const State<T> next = stepped(updated(in, dt), *in, dt);
    copy_state(*out, next);
    *wavespeed = gas.max_wavespeed(next);
  }

 private:
  template <typename In>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> updated(In in, T dt) const {
    const T dtdx = dt / h;
    const Conserved<T> l = conserved(*in.offset(Dim, -1)), c = conserved(*in), r = conserved(*in.offset(Dim, 1));
    return force_update<Dim>(gas, l, c, r, dtdx);
  }
};

}  // namespace euler2d
