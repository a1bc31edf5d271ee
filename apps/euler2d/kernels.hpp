#pragma once
// The Euler step's kernels as named function objects (nvcc cannot compile generic host-device
// lambdas, and a graph node names them): each has the signature tessera::for_each passes,
// iterators by value and the time step last.
//
//   tessera::reduce(ex, state, max_speed, tessera::Max{}, euler2d::Wavespeed<double>{gas});
//   tessera::for_each(ex, euler2d::edges_only(), euler2d::ZeroGradientEdges{}, state);
//   tessera::for_each(ex, euler2d::Sweep<0, double>{gas, h}, state, updated, dt);
//   tessera::for_each(ex, euler2d::Sweep<1, double>{gas, h}, updated, state, dt,
//                     tessera::reduce_into(max_speed, tessera::Max{}));  // and the next step's CFL maximum

#include "euler2d/force.hpp"
#include "euler2d/state.hpp"

#include <cstdint>
#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>
#include <tessera/exec/exec_options.hpp>

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
    store(*out, updated(in, dt));
  }
  template <typename In, typename Out, typename Contribution>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, T dt, Contribution wavespeed) const {
    const Conserved<T> q = updated(in, dt);
    const State<T> next(q.rho, q.e, {q.mx / q.rho, q.my / q.rho});  // what store() writes
    store(*out, q);
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
