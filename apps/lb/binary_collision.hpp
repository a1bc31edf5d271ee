#pragma once
// The binary-fluid collision at a group of W sites (lanes): the D3Q19 multiple-relaxation-time
// collision of f with the symmetric free energy's pressure tensor in the equilibrium stress,
// and the collision of g, whose zeroth moment is the order parameter phi. Ghost modes relax at
// rate 1 (Ludwig's `ghost_modes off`), so f leaves as its hydrodynamic projection.
//
// One source for both front ends: the targetDP kernel calls it with W = VVL lanes over a chunk
// of sites (each statement is a loop over the lanes, which the compiler vectorises across
// sites, targetDP's ILP), and the Tensor kernel calls it with W = 1 at one site. Per lane the
// operations and their order are the same, so the two give the same bits.
//
// The operation order follows Ludwig's collision (apps/lb/README.md, "Numerics").

#include "d3q19.hpp"

#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>

#if defined(__CUDACC__)
#define LB_LANES _Pragma("unroll")
#else
#define LB_LANES _Pragma("omp simd")
#endif

namespace lb {

/// Relaxation rates and free-energy parameters of the collision.
struct CollisionParameters {
  double rtau_shear;  ///< 1 / tau, tau = 1/2 + eta / (rho0 cs2)
  double rtau_bulk;
  double rtau2;       ///< the order parameter's rate, 2 / (1 + 2 M)
  double a;           ///< the symmetric free energy's A, B and kappa
  double b;
  double kappa;
};

/// Symmetric 3x3 index pair -> one of six stored components (xx, xy, xz, yy, yz, zz).
TESSERA_HOST_DEVICE constexpr int sym(int a, int b) {
  return a <= b ? (a == 0 ? b : a == 1 ? 2 + b : 5) : sym(b, a);
}

namespace detail {
// x += c * y for a compile-time velocity component c in {-1, 0, 1}: zero terms are skipped and
// +-1 is an addition, exactly what the multiplication would give.
template <int C>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void add_scaled(double& x, double y) {
  if constexpr (C == 1) x += y;
  if constexpr (C == -1) x -= y;
}
}  // namespace detail

/// Collides the W lanes of `site` (the first `nv` of them). `Site` gives, per lane v:
/// `f(p, v)` and `g(p, v)` (references to the populations), `phi(v)`, `grad(a, v)`,
/// `delsq(v)` (the order parameter and its gradients at the start of the step) and
/// `u(a, v)` (where the velocity goes).
template <int W, class Site>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void binary_collision(Site& site, int nv, const CollisionParameters& k) {
  using tessera::unrolled_for;
  constexpr double r3 = 1.0 / 3.0;
  double rho[W], j[3][W], s[6][W];

  // Moments of f: density, momentum, second moment less cs2 rho.
  LB_LANES for (int v = 0; v < nv; ++v) {
    rho[v] = 0.0;
    for (int a = 0; a < 3; ++a) j[a][v] = 0.0;
    for (int m = 0; m < 6; ++m) s[m][v] = 0.0;
  }
  unrolled_for<nvel>([&](auto P) {
    constexpr int p = static_cast<int>(P);
    constexpr double qxx = qab(p, 0, 0), qyy = qab(p, 1, 1), qzz = qab(p, 2, 2);
    LB_LANES for (int v = 0; v < nv; ++v) {
      const double fp = site.f(p, v);
      rho[v] += fp;
      detail::add_scaled<cv[p][0]>(j[0][v], fp);
      detail::add_scaled<cv[p][1]>(j[1][v], fp);
      detail::add_scaled<cv[p][2]>(j[2][v], fp);
      s[0][v] += fp * qxx;
      detail::add_scaled<cv[p][0] * cv[p][1]>(s[1][v], fp);
      detail::add_scaled<cv[p][0] * cv[p][2]>(s[2][v], fp);
      s[3][v] += fp * qyy;
      detail::add_scaled<cv[p][1] * cv[p][2]>(s[4][v], fp);
      s[5][v] += fp * qzz;
    }
  });

  double u[3][W], phi[W], mu[W];
  LB_LANES for (int v = 0; v < nv; ++v) {
    const double rrho = 1.0 / rho[v];
    for (int a = 0; a < 3; ++a) {
      u[a][v] = rrho * j[a][v];
      site.u(a, v) = u[a][v];
    }
    const double ph = site.phi(v), d2 = site.delsq(v);
    const double gx = site.grad(0, v), gy = site.grad(1, v), gz = site.grad(2, v);
    phi[v] = ph;
    mu[v] = k.a * ph + k.b * ph * ph * ph - k.kappa * d2;

    // The equilibrium stress: rho u u plus the symmetric free energy's pressure tensor.
    const double p0 = 0.5 * k.a * ph * ph + 0.75 * k.b * ph * ph * ph * ph - k.kappa * ph * d2 -
                      0.5 * k.kappa * (gx * gx + gy * gy + gz * gz);
    const double grad_v[3] = {gx, gy, gz};
    double seq[6];
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b) {
        const double flow = rho[v] * u[a][v] * u[b][v];
        seq[sym(a, b)] = (a == b ? flow + p0 : flow) + k.kappa * grad_v[a] * grad_v[b];
      }

    // Relax the traceless part at the shear rate and the trace at the bulk rate.
    double trs = s[0][v] + s[3][v] + s[5][v];
    const double trq = seq[0] + seq[3] + seq[5];
    for (int a = 0; a < 3; ++a) {
      s[sym(a, a)][v] -= r3 * trs;
      seq[sym(a, a)] -= r3 * trq;
    }
    trs = trs - k.rtau_bulk * (trs - trq);
    for (int m = 0; m < 6; ++m) s[m][v] -= k.rtau_shear * (s[m][v] - seq[m]);
    for (int a = 0; a < 3; ++a) s[sym(a, a)][v] += r3 * trs;
  }

  // f from its hydrodynamic modes: w_p (rho + 3 j.c_p + 4.5 S:q_p); the ghosts are zero.
  unrolled_for<nvel>([&](auto P) {
    constexpr int p = static_cast<int>(P);
    constexpr double weight = wv[p];
    LB_LANES for (int v = 0; v < nv; ++v) {
      double jc = 0.0;
      detail::add_scaled<cv[p][0]>(jc, j[0][v]);
      detail::add_scaled<cv[p][1]>(jc, j[1][v]);
      detail::add_scaled<cv[p][2]>(jc, j[2][v]);
      double sq = 0.0;
      unrolled_for<3>([&](auto A) {
        unrolled_for<3>([&](auto B) {
          constexpr int a = static_cast<int>(A), b = static_cast<int>(B);
          [[maybe_unused]] constexpr double qaa = qab(p, a, a);
          if constexpr (a == b)
            sq += s[sym(a, a)][v] * qaa;
          else
            detail::add_scaled<cv[p][a] * cv[p][b]>(sq, s[sym(a, b)][v]);
        });
      });
      site.f(p, v) = weight * (rho[v] + 3.0 * jc + 4.5 * sq);
    }
  });

  // The order parameter: its flux relaxes towards phi u, its second moment is phi u u + mu I.
  double jp[3][W];
  LB_LANES for (int v = 0; v < nv; ++v) {
    for (int a = 0; a < 3; ++a) jp[a][v] = 0.0;
  }
  unrolled_for<nvel - 1>([&](auto P1) {
    constexpr int p = static_cast<int>(P1) + 1;
    LB_LANES for (int v = 0; v < nv; ++v) {
      const double gp = site.g(p, v);
      detail::add_scaled<cv[p][0]>(jp[0][v], gp);
      detail::add_scaled<cv[p][1]>(jp[1][v], gp);
      detail::add_scaled<cv[p][2]>(jp[2][v], gp);
    }
  });
  double sp[6][W];
  LB_LANES for (int v = 0; v < nv; ++v) {
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b) {
        const double flow = phi[v] * u[a][v] * u[b][v];
        sp[sym(a, b)][v] = a == b ? flow + mu[v] : flow;
      }
    for (int a = 0; a < 3; ++a) jp[a][v] = jp[a][v] - k.rtau2 * (jp[a][v] - phi[v] * u[a][v]);
  }
  unrolled_for<nvel>([&](auto P) {
    constexpr int p = static_cast<int>(P);
    constexpr double weight = wv[p];
    LB_LANES for (int v = 0; v < nv; ++v) {
      double jc = 0.0;
      detail::add_scaled<cv[p][0]>(jc, jp[0][v]);
      detail::add_scaled<cv[p][1]>(jc, jp[1][v]);
      detail::add_scaled<cv[p][2]>(jc, jp[2][v]);
      double sq = 0.0;
      unrolled_for<3>([&](auto A) {
        unrolled_for<3>([&](auto B) {
          constexpr int a = static_cast<int>(A), b = static_cast<int>(B);
          [[maybe_unused]] constexpr double qaa = qab(p, a, a);
          if constexpr (a == b)
            sq += sp[sym(a, a)][v] * qaa;
          else
            detail::add_scaled<cv[p][a] * cv[p][b]>(sq, sp[sym(a, b)][v]);
        });
      });
      const double gq = weight * (jc * 3.0 + sq * 4.5);
      site.g(p, v) = p == 0 ? gq + phi[v] : gq;
    }
  });
}

}  // namespace lb
