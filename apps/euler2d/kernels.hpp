#pragma once
// The Euler step's kernels as named function objects (nvcc cannot compile generic host-device
// lambdas, and a graph node names them): each has the signature tessera::for_each passes,
// iterators by value and the time step last.
//
//   tessera::for_each(ex, euler2d::SetWavespeed<double>{gas}, state, wavespeeds);
//   tessera::for_each(ex, euler2d::ZeroGradientEdges{}, state);
//   tessera::for_each(ex, euler2d::Sweep<0, double>{gas, h}, state, updated, dt);

#include "euler2d/force.hpp"
#include "euler2d/state.hpp"

#include <cstdint>
#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>

#include <cstddef>

namespace euler2d {

/// ws = max(|u| + c, |v| + c) at every cell: what the CFL reduction folds with Max.
template <typename T>
struct SetWavespeed {
  IdealGas<T> gas;
  template <typename StateIt, typename SpeedIt>
  TESSERA_HOST_DEVICE void operator()(StateIt state, SpeedIt ws) const {
    *ws = gas.max_wavespeed(*state);
  }
};

/// Transmissive boundaries, as in Ripple: a cell on the domain's edge copies itself into the
/// padding site beyond that edge (zero gradient). Only cells on the edge write, and each writes
/// its own padding site, so blocks and lanes never write the same site.
struct ZeroGradientEdges {
  template <typename It>
  TESSERA_HOST_DEVICE void operator()(It it) const {
    tessera::unrolled_for<decltype(it)::dims>([&](auto d) {
      if (it.global_idx(d) == 0) *it.offset(d, -1) = *it;
      if (it.global_idx(d) == static_cast<std::int64_t>(it.global_size(d)) - 1) *it.offset(d, 1) = *it;
    });
  }
};

/// One first-order FORCE sweep along Dim: out = in - dt/h (F(i+1/2) - F(i-1/2)). Reads in's
/// padding along Dim, so in's boundary and halo must be loaded first.
template <std::size_t Dim, typename T>
struct Sweep {
  IdealGas<T> gas;
  T h;  ///< cell width
  template <typename In, typename Out>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, T dt) const {
    const T dtdx = dt / h;
    const Conserved<T> l = conserved(*in.offset(Dim, -1)), c = conserved(*in), r = conserved(*in.offset(Dim, 1));
    store(*out, force_update<Dim>(gas, l, c, r, dtdx));
  }
};

}  // namespace euler2d
