#pragma once
// The FORCE flux for the 2-D Euler equations (Toro §7.4.2): the mean of the Lax-Friedrichs flux
// and the flux of Richtmyer's two-step Lax-Wendroff intermediate state. It needs no Riemann
// solver and no wave-speed estimate, and is monotone for CFL <= 1 (Toro §7.4.2), which makes it
// the scheme of Ripple's Euler benchmark (§8) and of this app.
//
//   const euler2d::Conserved<double> f = euler2d::force_flux<0>(gas, left, right, dt / dx);
//   // the first-order update of cell i: U_i -= dt/dx (F(i+1/2) - F(i-1/2))

#include "euler2d/state.hpp"

#include <cstddef>

namespace euler2d {

/// The physical flux of q along dimension Dim (0 = x, 1 = y).
template <std::size_t Dim, typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> physical_flux(const IdealGas<T>& gas, const Conserved<T>& q) {
  const T inv = T(1) / q.rho;
  const T u = q.mx * inv, v = q.my * inv;
  const T p = (gas.gamma - T(1)) * (q.e - T(0.5) * (q.mx * u + q.my * v));
  const T un = Dim == 0 ? u : v;
  return {Dim == 0 ? q.mx : q.my, (q.e + p) * un, q.mx * un + (Dim == 0 ? p : T(0)), q.my * un + (Dim == 1 ? p : T(0))};
}

/// The FORCE flux at the face between l and r along Dim, for time step over cell width `dtdx`.
template <std::size_t Dim, typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> force_flux(const IdealGas<T>& gas, const Conserved<T>& l,
                                                                 const Conserved<T>& r, T dtdx) {
  const Conserved<T> fl = physical_flux<Dim>(gas, l), fr = physical_flux<Dim>(gas, r);
  const T h = T(0.5), lf = T(0.5) / dtdx, ri = T(0.5) * dtdx;
  // Richtmyer's intermediate state, then its flux.
  const Conserved<T> m{h * (l.rho + r.rho) + ri * (fl.rho - fr.rho), h * (l.e + r.e) + ri * (fl.e - fr.e),
                       h * (l.mx + r.mx) + ri * (fl.mx - fr.mx), h * (l.my + r.my) + ri * (fl.my - fr.my)};
  const Conserved<T> fm = physical_flux<Dim>(gas, m);
  // FORCE = (Lax-Friedrichs + Richtmyer) / 2.
  return {h * (h * (fl.rho + fr.rho) + lf * (l.rho - r.rho) + fm.rho), h * (h * (fl.e + fr.e) + lf * (l.e - r.e) + fm.e),
          h * (h * (fl.mx + fr.mx) + lf * (l.mx - r.mx) + fm.mx), h * (h * (fl.my + fr.my) + lf * (l.my - r.my) + fm.my)};
}

/// One cell's first-order conservative update along Dim from its neighbours l and r:
/// c - dt/dx (F(c, r) - F(l, c)).
template <std::size_t Dim, typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> force_update(const IdealGas<T>& gas, const Conserved<T>& l,
                                                                   const Conserved<T>& c, const Conserved<T>& r,
                                                                   T dtdx) {
  const Conserved<T> a = force_flux<Dim>(gas, c, r, dtdx), b = force_flux<Dim>(gas, l, c, dtdx);
  return {c.rho - dtdx * (a.rho - b.rho), c.e - dtdx * (a.e - b.e), c.mx - dtdx * (a.mx - b.mx),
          c.my - dtdx * (a.my - b.my)};
}

}  // namespace euler2d
