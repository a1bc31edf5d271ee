#pragma once
// The 2-D Euler equations' FORCE flux (Toro §7.4.2: the mean of the Lax-Friedrichs and the
// two-step Lax-Wendroff (Richtmyer) fluxes) for an ideal gas, gamma = 1.4, and the per-cell flux
// difference sum_d F(i+1/2) - F(i-1/2) (Ripple §7.3). Both the tessera kernels and the OpenMP
// baselines call flux_difference, so their arithmetic is the same and only addressing differs.

#include <tessera/core/host_device.hpp>
#include <tessera/layout/record.hpp>

#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

namespace tessera::bench {

/// The stored state: density, total energy per volume, and one velocity per dimension.
template <typename T, typename S = Owned>
struct Fluid : tessera::Record<S, T, T, Vector<T, 2>> {
  TESSERA_RECORD(Fluid)
  TESSERA_FIELD(density, 0)
  TESSERA_FIELD(energy, 1)
  TESSERA_FIELD(velocity, 2)
  TESSERA_FIELD(u, 2, 0)
  TESSERA_FIELD(v, 2, 1)
};

/// Conserved variables: density, energy, x- and y-momentum.
template <typename T>
struct Conserved {
  T rho, e, mx, my;
};

template <typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> conserved(T rho, T e, T u, T v) {
  return {rho, e, rho * u, rho * v};
}

/// The physical flux along dimension Dim.
template <std::size_t Dim, typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> physical_flux(const Conserved<T>& q) {
  constexpr T gamma = T(1.4);
  const T inv = T(1) / q.rho;
  const T u = q.mx * inv, v = q.my * inv;
  const T p = (gamma - T(1)) * (q.e - T(0.5) * (q.mx * u + q.my * v));
  const T un = Dim == 0 ? u : v;
  return {Dim == 0 ? q.mx : q.my, (q.e + p) * un, q.mx * un + (Dim == 0 ? p : T(0)),
          q.my * un + (Dim == 1 ? p : T(0))};
}

/// FORCE flux at the face between l and r along Dim, for time step over cell width `dtdx`.
template <std::size_t Dim, typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> force_flux(const Conserved<T>& l, const Conserved<T>& r, T dtdx) {
  const Conserved<T> fl = physical_flux<Dim>(l), fr = physical_flux<Dim>(r);
  const T h = T(0.5), lf = T(0.5) / dtdx, ri = T(0.5) * dtdx;
  // Richtmyer's intermediate state, then its flux.
  const Conserved<T> m{h * (l.rho + r.rho) + ri * (fl.rho - fr.rho), h * (l.e + r.e) + ri * (fl.e - fr.e),
                       h * (l.mx + r.mx) + ri * (fl.mx - fr.mx), h * (l.my + r.my) + ri * (fl.my - fr.my)};
  const Conserved<T> fm = physical_flux<Dim>(m);
  // FORCE = (Lax-Friedrichs + Richtmyer) / 2.
  return {h * (h * (fl.rho + fr.rho) + lf * (l.rho - r.rho) + fm.rho), h * (h * (fl.e + fr.e) + lf * (l.e - r.e) + fm.e),
          h * (h * (fl.mx + fr.mx) + lf * (l.mx - r.mx) + fm.mx), h * (h * (fl.my + fr.my) + lf * (l.my - r.my) + fm.my)};
}

/// sum over x and y of F(i+1/2) - F(i-1/2) for cell c with neighbours xl, xr, yl, yr.
template <typename T>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Conserved<T> flux_difference(const Conserved<T>& c, const Conserved<T>& xl,
                                                                    const Conserved<T>& xr, const Conserved<T>& yl,
                                                                    const Conserved<T>& yr, T dtdx) {
  const Conserved<T> a = force_flux<0>(c, xr, dtdx), b = force_flux<0>(xl, c, dtdx);
  const Conserved<T> p = force_flux<1>(c, yr, dtdx), q = force_flux<1>(yl, c, dtdx);
  return {(a.rho - b.rho) + (p.rho - q.rho), (a.e - b.e) + (p.e - q.e), (a.mx - b.mx) + (p.mx - q.mx),
          (a.my - b.my) + (p.my - q.my)};
}

/// A smooth state with positive density and pressure: cell (i, j) from per-row and per-column
/// tables of sin/cos(2 pi x) (sx, cx) and (2 pi y) (sy, cy).
template <typename T>
inline void initial_fluid(double sx, double cx, double sy, double cy, T& rho, T& e, T& u, T& v) {
  rho = static_cast<T>(1.0 + 0.2 * sx * cy);
  u = static_cast<T>(0.5 * sy);
  v = static_cast<T>(-0.3 * cx);
  const double p = 1.0 + 0.1 * (sx * cy + cx * sy);
  e = static_cast<T>(p / 0.4 + 0.5 * static_cast<double>(rho) * (static_cast<double>(u) * u + static_cast<double>(v) * v));
}

/// The benchmarks' n x n initial state (x fastest), as Tensor::fill_from takes it.
template <typename T>
std::vector<Fluid<T>> initial_state(std::size_t n) {
  std::vector<double> s(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = 2.0 * std::numbers::pi * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    s[i] = std::sin(a);
    c[i] = std::cos(a);
  }
  std::vector<Fluid<T>> dense(n * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      T rho, e, u, v;
      initial_fluid(s[i], c[i], s[j], c[j], rho, e, u, v);
      dense[j * n + i] = Fluid<T>(rho, e, {u, v});
    }
  return dense;
}

/// For row or column k of an (n+2)-wide array with a one-cell halo, the interior row or column
/// whose values it holds under ZeroGradient (the nearest one; the halo copies its neighbour).
inline std::size_t zero_gradient_source(std::size_t n, std::size_t k) { return k == 0 ? 0 : (k > n ? n - 1 : k - 1); }

}  // namespace tessera::bench
