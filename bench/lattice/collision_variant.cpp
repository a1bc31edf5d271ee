// One targetDP collision variant: compiled once per (layout, VVL) with LATTICE_VVL and
// LATTICE_AOSOA set by bench/lattice/CMakeLists.txt. SoA: population p of site s at
// [p * nsites + s]; AoSoA: sites in tiles of VVL, [(s / VVL * 19 + p) * VVL + s % VVL].

#define VVL LATTICE_VVL
#include <tessera/targetdp.h>

#include "lattice_bench.hpp"

#define LATTICE_CAT2(a, b, c) collide_##a##_##b
#define LATTICE_NAME(layout, vvl) LATTICE_CAT2(layout, vvl, x)
#if LATTICE_AOSOA
#define LATTICE_LAYOUT aosoa
#else
#define LATTICE_LAYOUT soa
#endif

namespace lattice_bench {

namespace {

struct ChunkSite {
  Fields d;
  std::size_t s0;
#if LATTICE_AOSOA
  // s0 is a multiple of VVL: the chunk is one tile.
  double& f(int p, int v) { return d.f[(s0 * lb::nvel) + static_cast<std::size_t>(p) * VVL + v]; }
  double& g(int p, int v) { return d.g[(s0 * lb::nvel) + static_cast<std::size_t>(p) * VVL + v]; }
  double grad(int a, int v) const { return d.grad[(s0 * 3) + static_cast<std::size_t>(a) * VVL + v]; }
  double& u(int a, int v) { return d.u[(s0 * 3) + static_cast<std::size_t>(a) * VVL + v]; }
#else
  double& f(int p, int v) { return d.f[static_cast<std::size_t>(p) * d.nsites + s0 + v]; }
  double& g(int p, int v) { return d.g[static_cast<std::size_t>(p) * d.nsites + s0 + v]; }
  double grad(int a, int v) const { return d.grad[static_cast<std::size_t>(a) * d.nsites + s0 + v]; }
  double& u(int a, int v) { return d.u[static_cast<std::size_t>(a) * d.nsites + s0 + v]; }
#endif
  double phi(int v) const { return d.phi[s0 + v]; }
  double delsq(int v) const { return d.delsq[s0 + v]; }
};

TARGET_ENTRY void collide_kernel(Fields d, lb::CollisionParameters k) {
  std::size_t base;
  TARGET_TLP(base, d.nsites) {
    ChunkSite site{d, base};
    lb::binary_collision<VVL>(site, tdp_nv_, k);
  }
}

}  // namespace

void LATTICE_NAME(LATTICE_LAYOUT, LATTICE_VVL)(const Fields& d, const lb::CollisionParameters& k) {
  collide_kernel TARGET_LAUNCH(d.nsites)(d, k);
  syncTarget();
}

}  // namespace lattice_bench
