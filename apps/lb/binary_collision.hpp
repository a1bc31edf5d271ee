#pragma once
// The binary-fluid collision at a group of W sites (lanes): the D3Q19 multiple-relaxation-time
// collision of f with the symmetric free energy's pressure tensor in the equilibrium stress,
// and the collision of g, whose zeroth moment is the order parameter phi. Ghost modes relax at
// rate 1 (Ludwig's `ghost_modes off`), so f leaves as its hydrodynamic projection.
//
// One source for both front ends: the targetDP kernel calls it with W = VVL lanes over a chunk
// of sites (the loop over lanes is targetDP's ILP loop, which the compiler vectorises across
// sites), and the Tensor kernel calls it with W = 1 at one site. Per lane the operations and
// their order are the same, so the two give the same bits.
//
// The operation order follows Ludwig's collision (apps/lb/README.md, "Numerics").

#include "d3q19.hpp"

#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>

// The lane loops: `omp simd` for CPUs (the host compiler, and nvcc's host pass), `unroll` in
// nvcc's device pass, where gcc's `omp simd` means nothing and `unroll` is unknown to gcc.
#if defined(__CUDA_ARCH__)
#define LB_LANES _Pragma("unroll")
#else
#define LB_LANES _Pragma("omp simd")
#endif
// Every lambda of a lane's body inlined, so the lane loop sees straight-line code and
// vectorises across sites (nvcc inlines device lambdas on its own).
#if defined(__CUDACC__)
#define LB_LAMBDA_INLINE
#else
#define LB_LAMBDA_INLINE __attribute__((always_inline))
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

// j . c_p, the terms added in component order (the zero ones skipped).
template <int p>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE double dot_c(const double (&j)[3]) {
  double jc = 0.0;
  add_scaled<cv[p][0]>(jc, j[0]);
  add_scaled<cv[p][1]>(jc, j[1]);
  add_scaled<cv[p][2]>(jc, j[2]);
  return jc;
}

// S : q_p for a symmetric S stored as six components, the nine terms added in (a, b) order
// (the zero ones skipped, the off-diagonal ones twice).
template <int p>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE double contract_q(const double (&s)[6]) {
  double sq = 0.0;
  tessera::unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE {
    tessera::unrolled_for<3>([&](auto B) LB_LAMBDA_INLINE {
      constexpr int a = static_cast<int>(A), b = static_cast<int>(B);
      [[maybe_unused]] constexpr double qaa = qab(p, a, a);
      if constexpr (a == b)
        sq += s[sym(a, a)] * qaa;
      else
        add_scaled<cv[p][a] * cv[p][b]>(sq, s[sym(a, b)]);
    });
  });
  return sq;
}
}  // namespace detail

/// Collides lane v of `site`: straight-line code (every loop over velocities and components is
/// unrolled at compile time), so that a loop over lanes around it vectorises across sites with
/// every intermediate in a vector register.
template <class Site>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void binary_collision_lane(Site& site, int v, const CollisionParameters& k) {
  using tessera::unrolled_for;
  constexpr double r3 = 1.0 / 3.0;

  // Moments of f: density, momentum, second moment less cs2 rho.
  double rho = 0.0, j[3] = {0.0, 0.0, 0.0}, s[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  unrolled_for<nvel>([&](auto P) LB_LAMBDA_INLINE {
    constexpr int p = static_cast<int>(P);
    constexpr double qxx = qab(p, 0, 0), qyy = qab(p, 1, 1), qzz = qab(p, 2, 2);
    const double fp = site.f(p, v);
    rho += fp;
    detail::add_scaled<cv[p][0]>(j[0], fp);
    detail::add_scaled<cv[p][1]>(j[1], fp);
    detail::add_scaled<cv[p][2]>(j[2], fp);
    s[0] += fp * qxx;
    detail::add_scaled<cv[p][0] * cv[p][1]>(s[1], fp);
    detail::add_scaled<cv[p][0] * cv[p][2]>(s[2], fp);
    s[3] += fp * qyy;
    detail::add_scaled<cv[p][1] * cv[p][2]>(s[4], fp);
    s[5] += fp * qzz;
  });

  const double rrho = 1.0 / rho;
  const double u[3] = {rrho * j[0], rrho * j[1], rrho * j[2]};
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE { site.u(static_cast<int>(A), v) = u[A]; });
  const double ph = site.phi(v), d2 = site.delsq(v);
  const double gr[3] = {site.grad(0, v), site.grad(1, v), site.grad(2, v)};
  const double mu = k.a * ph + k.b * ph * ph * ph - k.kappa * d2;

  // The equilibrium stress: rho u u plus the symmetric free energy's pressure tensor.
  const double p0 = 0.5 * k.a * ph * ph + 0.75 * k.b * ph * ph * ph * ph - k.kappa * ph * d2 -
                    0.5 * k.kappa * (gr[0] * gr[0] + gr[1] * gr[1] + gr[2] * gr[2]);
  double seq[6];
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE {
    unrolled_for<3>([&](auto B) LB_LAMBDA_INLINE {
      constexpr int a = static_cast<int>(A), b = static_cast<int>(B);
      if constexpr (a <= b) {
        const double flow = rho * u[a] * u[b];
        seq[sym(a, b)] = (a == b ? flow + p0 : flow) + k.kappa * gr[a] * gr[b];
      }
    });
  });

  // Relax the traceless part at the shear rate and the trace at the bulk rate.
  double trs = s[0] + s[3] + s[5];
  const double trq = seq[0] + seq[3] + seq[5];
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE {
    s[sym(A, A)] -= r3 * trs;
    seq[sym(A, A)] -= r3 * trq;
  });
  trs = trs - k.rtau_bulk * (trs - trq);
  unrolled_for<6>([&](auto M) LB_LAMBDA_INLINE { s[M] -= k.rtau_shear * (s[M] - seq[M]); });
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE { s[sym(A, A)] += r3 * trs; });

  // f from its hydrodynamic modes: w_p (rho + 3 j.c_p + 4.5 S:q_p); the ghosts are zero.
  unrolled_for<nvel>([&](auto P) LB_LAMBDA_INLINE {
    constexpr int p = static_cast<int>(P);
    constexpr double weight = wv[p];
    const double jc = detail::dot_c<p>(j);
    const double sq = detail::contract_q<p>(s);
    site.f(p, v) = weight * (rho + 3.0 * jc + 4.5 * sq);
  });

  // The order parameter: its flux relaxes towards phi u, its second moment is phi u u + mu I.
  double jp[3] = {0.0, 0.0, 0.0};
  unrolled_for<nvel - 1>([&](auto P1) LB_LAMBDA_INLINE {
    constexpr int p = static_cast<int>(P1) + 1;
    const double gp = site.g(p, v);
    detail::add_scaled<cv[p][0]>(jp[0], gp);
    detail::add_scaled<cv[p][1]>(jp[1], gp);
    detail::add_scaled<cv[p][2]>(jp[2], gp);
  });
  double sp[6];
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE {
    unrolled_for<3>([&](auto B) LB_LAMBDA_INLINE {
      constexpr int a = static_cast<int>(A), b = static_cast<int>(B);
      if constexpr (a <= b) {
        const double flow = ph * u[a] * u[b];
        sp[sym(a, b)] = a == b ? flow + mu : flow;
      }
    });
  });
  unrolled_for<3>([&](auto A) LB_LAMBDA_INLINE { jp[A] = jp[A] - k.rtau2 * (jp[A] - ph * u[A]); });
  unrolled_for<nvel>([&](auto P) LB_LAMBDA_INLINE {
    constexpr int p = static_cast<int>(P);
    constexpr double weight = wv[p];
    const double jc = detail::dot_c<p>(jp);
    const double sq = detail::contract_q<p>(sp);
    const double gq = weight * (jc * 3.0 + sq * 4.5);
    if constexpr (p == 0)
      site.g(p, v) = gq + ph;
    else
      site.g(p, v) = gq;
  });
}

/// Collides the first `nv` of W lanes of `site`. `Site` gives, per lane v: `f(p, v)` and
/// `g(p, v)` (references to the populations), `phi(v)`, `grad(a, v)`, `delsq(v)` (the order
/// parameter and its gradients at the start of the step) and `u(a, v)` (where the velocity
/// goes). The loop over lanes is the ILP loop: the compiler vectorises it across sites.
template <int W, class Site>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void binary_collision(Site& site, int nv, const CollisionParameters& k) {
  LB_LANES for (int v = 0; v < nv; ++v) binary_collision_lane(site, v, k);
  static_assert(W >= 1, "at least one lane");
}

}  // namespace lb
