#pragma once
// SUITE=lattice: Ludwig's binary collision (the targetDP paper's benchmark) over a lattice of
// sites, as targetDP kernels in SoA and AoSoA layouts for VVL = 1, 2, 4, 8, 16, as a
// tessera::for_each over Tensors, and as the baseline the paper measured against: an OpenMP
// loop over sites whose inner loops run over the 19 velocities (AoS, so those loops read
// contiguous memory). STREAM triad gives the bandwidth ceiling.

#include "binary_collision.hpp"

#include <cstddef>

namespace lattice_bench {

/// The fields of one collision over `nsites` sites, in the layout a variant uses.
struct Fields {
  double* f;
  double* g;
  const double* phi;
  const double* grad;
  const double* delsq;
  double* u;
  std::size_t nsites;
};

/// One targetDP collision over every site (VVL and layout fixed when the file was compiled).
using TargetDpCollision = void (*)(const Fields&, const lb::CollisionParameters&);

#define LATTICE_BENCH_DECLARE(layout, vvl) \
  void collide_##layout##_##vvl(const Fields&, const lb::CollisionParameters&);
LATTICE_BENCH_DECLARE(soa, 1)
LATTICE_BENCH_DECLARE(soa, 2)
LATTICE_BENCH_DECLARE(soa, 4)
LATTICE_BENCH_DECLARE(soa, 8)
LATTICE_BENCH_DECLARE(soa, 16)
LATTICE_BENCH_DECLARE(aosoa, 1)
LATTICE_BENCH_DECLARE(aosoa, 2)
LATTICE_BENCH_DECLARE(aosoa, 4)
LATTICE_BENCH_DECLARE(aosoa, 8)
LATTICE_BENCH_DECLARE(aosoa, 16)
#undef LATTICE_BENCH_DECLARE

/// The baseline over AoS fields (site s, velocity p at [s * 19 + p]; grad and u at [s * 3 + a]):
/// an OpenMP parallel loop over sites, per site the moments, the relaxation and the new
/// populations as loops over the 19 velocities. `collide_sites_scalar` is the same source built
/// with the vectoriser off, which the suite compares with to show the baseline's loops vectorise.
void collide_sites(const Fields& aos, const lb::CollisionParameters& k);
void collide_sites_scalar(const Fields& aos, const lb::CollisionParameters& k);
/// a = b + s c over n doubles, OpenMP static schedule (first touched with the same schedule).
void stream_triad(double* a, const double* b, const double* c, double s, std::size_t n);
void first_touch(double* p, std::size_t n);
bool have_openmp();

}  // namespace lattice_bench
