// The paper's baseline for the binary collision: an OpenMP loop over sites, each site's work
// written as loops over the 19 velocities on AoS data (contiguous per site, the layout that
// suits those loops), with the same arithmetic as lb::binary_collision up to the order of the
// sums. Built twice: as is, and (LATTICE_BASELINE_SCALAR) with the vectoriser off, so the suite
// can show the baseline's loops do vectorise.

#include "lattice_bench.hpp"

#include <cstring>

#if defined(LATTICE_BASELINE_SCALAR)
#define LATTICE_BASELINE_NAME collide_sites_scalar
#define LATTICE_SIMD(clauses)
#else
#define LATTICE_BASELINE_NAME collide_sites
#define LATTICE_SIMD(clauses) _Pragma(#clauses)
#endif

namespace lattice_bench {

namespace {

// Per-velocity tables as plain arrays, so the loops over p are unit-stride vector loops.
struct Tables {
  double w[lb::nvel], cx[lb::nvel], cy[lb::nvel], cz[lb::nvel];
  double q[6][lb::nvel];  // xx, xy, xz, yy, yz, zz
  Tables() {
    for (int p = 0; p < lb::nvel; ++p) {
      w[p] = lb::wv[p];
      cx[p] = lb::cv[p][0];
      cy[p] = lb::cv[p][1];
      cz[p] = lb::cv[p][2];
      q[0][p] = lb::qab(p, 0, 0);
      q[1][p] = lb::qab(p, 0, 1);
      q[2][p] = lb::qab(p, 0, 2);
      q[3][p] = lb::qab(p, 1, 1);
      q[4][p] = lb::qab(p, 1, 2);
      q[5][p] = lb::qab(p, 2, 2);
    }
  }
};
const Tables tables;

}  // namespace

void LATTICE_BASELINE_NAME(const Fields& d, const lb::CollisionParameters& k) {
  const Tables& t = tables;
  const long n = static_cast<long>(d.nsites);
  constexpr double r3 = 1.0 / 3.0;
#pragma omp parallel for schedule(static)
  for (long s = 0; s < n; ++s) {
    double* f = d.f + s * lb::nvel;
    double* g = d.g + s * lb::nvel;
    // One pass over the populations for all ten moments.
    double rho = 0, jx = 0, jy = 0, jz = 0, mxx = 0, mxy = 0, mxz = 0, myy = 0, myz = 0, mzz = 0;
    LATTICE_SIMD(omp simd reduction(+ : rho, jx, jy, jz, mxx, mxy, mxz, myy, myz, mzz))
    for (int p = 0; p < lb::nvel; ++p) {  // hot-loop: moments
      rho += f[p];
      jx += f[p] * t.cx[p];
      jy += f[p] * t.cy[p];
      jz += f[p] * t.cz[p];
      mxx += f[p] * t.q[0][p];
      mxy += f[p] * t.q[1][p];
      mxz += f[p] * t.q[2][p];
      myy += f[p] * t.q[3][p];
      myz += f[p] * t.q[4][p];
      mzz += f[p] * t.q[5][p];
    }
    double m[6] = {mxx, mxy, mxz, myy, myz, mzz};
    const double rrho = 1.0 / rho;
    const double u[3] = {rrho * jx, rrho * jy, rrho * jz};
    for (int a = 0; a < 3; ++a) d.u[s * 3 + a] = u[a];
    const double ph = d.phi[s], d2 = d.delsq[s];
    const double gr[3] = {d.grad[s * 3], d.grad[s * 3 + 1], d.grad[s * 3 + 2]};
    const double mu = k.a * ph + k.b * ph * ph * ph - k.kappa * d2;
    const double p0 = 0.5 * k.a * ph * ph + 0.75 * k.b * ph * ph * ph * ph - k.kappa * ph * d2 -
                      0.5 * k.kappa * (gr[0] * gr[0] + gr[1] * gr[1] + gr[2] * gr[2]);
    double seq[6];
    int c = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b, ++c) seq[c] = rho * u[a] * u[b] + (a == b ? p0 : 0.0) + k.kappa * gr[a] * gr[b];
    double trs = m[0] + m[3] + m[5];
    const double trq = seq[0] + seq[3] + seq[5];
    for (int diag : {0, 3, 5}) {
      m[diag] -= r3 * trs;
      seq[diag] -= r3 * trq;
    }
    trs = trs - k.rtau_bulk * (trs - trq);
    for (int cc = 0; cc < 6; ++cc) m[cc] -= k.rtau_shear * (m[cc] - seq[cc]);
    for (int diag : {0, 3, 5}) m[diag] += r3 * trs;
    // Off-diagonal pairs count twice in S:q.
    const double sxy2 = 2 * m[1], sxz2 = 2 * m[2], syz2 = 2 * m[4];
    LATTICE_SIMD(omp simd)
    for (int p = 0; p < lb::nvel; ++p) {  // hot-loop: collide-f
      const double jc = jx * t.cx[p] + jy * t.cy[p] + jz * t.cz[p];
      const double sq = m[0] * t.q[0][p] + sxy2 * t.q[1][p] + sxz2 * t.q[2][p] + m[3] * t.q[3][p] + syz2 * t.q[4][p] +
                        m[5] * t.q[5][p];
      f[p] = t.w[p] * (rho + 3.0 * jc + 4.5 * sq);
    }
    // The order parameter.
    double px = 0, py = 0, pz = 0;
    LATTICE_SIMD(omp simd reduction(+ : px, py, pz))
    for (int p = 0; p < lb::nvel; ++p) {  // hot-loop: order-moments
      px += g[p] * t.cx[p];
      py += g[p] * t.cy[p];
      pz += g[p] * t.cz[p];
    }
    const double jp[3] = {px - k.rtau2 * (px - ph * u[0]), py - k.rtau2 * (py - ph * u[1]),
                          pz - k.rtau2 * (pz - ph * u[2])};
    double sp[6];
    c = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b, ++c) sp[c] = ph * u[a] * u[b] + (a == b ? mu : 0.0);
    const double pxy2 = 2 * sp[1], pxz2 = 2 * sp[2], pyz2 = 2 * sp[4];
    LATTICE_SIMD(omp simd)
    for (int p = 0; p < lb::nvel; ++p) {  // hot-loop: collide-g
      const double jc = jp[0] * t.cx[p] + jp[1] * t.cy[p] + jp[2] * t.cz[p];
      const double sq = sp[0] * t.q[0][p] + pxy2 * t.q[1][p] + pxz2 * t.q[2][p] + sp[3] * t.q[3][p] +
                        pyz2 * t.q[4][p] + sp[5] * t.q[5][p];
      g[p] = t.w[p] * (jc * 3.0 + sq * 4.5) + (p == 0 ? ph : 0.0);
    }
  }
}

#if !defined(LATTICE_BASELINE_SCALAR)
void stream_triad(double* a, const double* b, const double* c, double s, std::size_t n) {
  const long m = static_cast<long>(n);
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < m; ++i) {  // hot-loop: triad
    a[i] = b[i] + s * c[i];
  }
}

void first_touch(double* p, std::size_t n) {
  const long m = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < m; ++i) p[i] = 0.0;
}

bool have_openmp() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}
#endif

}  // namespace lattice_bench
