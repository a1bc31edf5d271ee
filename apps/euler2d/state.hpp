#pragma once
// The 2-D Euler state of an ideal gas as a layout-polymorphic Record, and the conversions the
// scheme needs: primitive (rho, u, v, p) <-> conserved (rho, E, rho u, rho v), the sound speed
// and the largest signal speed |u_d| + c.
//
//   tessera::Tensor<euler2d::State<double>, 2, tessera::Strided> u(memory, {nx, ny}, options);
//   const euler2d::IdealGas<double> gas{1.4};
//   u.set({i, j}, gas.state(euler2d::Primitive<double>{1.0, 0.0, 0.0, 1.0}));
//   tessera::for_each(ex, [gas] TESSERA_HOST_DEVICE (auto s, auto ws) { *ws = gas.max_wavespeed(*s); }, u, ws);

#include <tessera/core/host_device.hpp>
#include <tessera/layout/record.hpp>

#include <cmath>

namespace euler2d {

/// What a cell stores: density, total energy per unit volume, and velocity. Any layout:
/// State<T> is the owned value, State<T, View<L>> a site of a tensor laid out as L.
template <typename T, typename S = tessera::Owned>
struct State : tessera::Record<S, T, T, tessera::Vector<T, 2>> {
  TESSERA_RECORD(State)
  TESSERA_FIELD(density, 0)
  TESSERA_FIELD(energy, 1)
  TESSERA_FIELD(velocity, 2)
};

/// Conserved variables: density, total energy, x- and y-momentum (what the flux updates).
template <typename T>
struct Conserved {
  T rho, e, mx, my;
};

/// Primitive variables: density, velocity, pressure (what problems are set up in).
template <typename T>
struct Primitive {
  T rho, u, v, p;
};

/// An ideal gas, p = (gamma - 1) (E - rho |u|^2 / 2).
template <typename T>
struct IdealGas {
  T gamma = T(1.4);

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE T pressure(const Conserved<T>& q) const {
    return (gamma - T(1)) * (q.e - T(0.5) * (q.mx * q.mx + q.my * q.my) / q.rho);
  }
  template <typename S>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE T pressure(const State<T, S>& s) const {
    const T u = s.velocity()[0], v = s.velocity()[1];
    return (gamma - T(1)) * (s.energy() - T(0.5) * s.density() * (u * u + v * v));
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE T sound_speed(T rho, T p) const { return std::sqrt(gamma * p / rho); }

  /// max(|u| + c, |v| + c): the fastest signal in the cell, for the CFL condition.
  template <typename S>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE T max_wavespeed(const State<T, S>& s) const {
    const T c = sound_speed(s.density(), pressure(s));
    const T u = std::fabs(s.velocity()[0]), v = std::fabs(s.velocity()[1]);
    return (u > v ? u : v) + c;
  }

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> conserved(const Primitive<T>& w) const {
    return {w.rho, w.p / (gamma - T(1)) + T(0.5) * w.rho * (w.u * w.u + w.v * w.v), w.rho * w.u, w.rho * w.v};
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Primitive<T> primitive(const Conserved<T>& q) const {
    return {q.rho, q.mx / q.rho, q.my / q.rho, pressure(q)};
  }
  template <typename S>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Primitive<T> primitive(const State<T, S>& s) const {
    return {s.density(), s.velocity()[0], s.velocity()[1], pressure(s)};
  }
  /// The owned State of a primitive state.
  TESSERA_HOST_DEVICE State<T> state(const Primitive<T>& w) const {
    return State<T>(w.rho, conserved(w).e, {w.u, w.v});
  }
};

/// The conserved variables of a stored state.
template <typename T, typename S>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> conserved(const State<T, S>& s) {
  const T rho = s.density();
  return {rho, s.energy(), rho * s.velocity()[0], rho * s.velocity()[1]};
}

/// Stores conserved variables into a state (a tensor site's view, or an owned value).
template <typename T, typename S>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void store(State<T, S>& s, const Conserved<T>& q) {
  s.density() = q.rho;
  s.energy() = q.e;
  s.velocity()[0] = q.mx / q.rho;
  s.velocity()[1] = q.my / q.rho;
}
template <typename T, typename S>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void store(State<T, S>&& s, const Conserved<T>& q) {
  store(s, q);
}

}  // namespace euler2d
