#pragma once
// Hand-written OpenMP loops (baselines.cpp, the only file built with OpenMP): what each tessera
// kernel is compared with. Each is the loop an engineer would write for the layout, with
// `omp parallel for` over the outer index and `simd` on the inner one.

#include "euler.hpp"

#include <cstddef>

namespace jacobi3d {
struct BlockGrid;
}

namespace tessera::bench::baseline {

/// One Jacobi3D step of each of `count` blocks (apps/jacobi3d's `step`: the 7-point average, the
/// largest change, the held planes), the blocks shared out by `omp parallel for`, as the
/// hand-written MPI solver steps a rank's blocks (`one_thread`: on the calling thread alone).
/// Returns the largest change.
double jacobi_steps(jacobi3d::BlockGrid* blocks, std::size_t count, bool one_thread = false);

/// The 7-point average (centre included, / 7) of an n^3 block with one padding site on every
/// side, rows of `pitch` doubles and `rows_per_plane` rows a z plane, from `in` into `out` (both
/// the block's first padded row): Jacobi3D's stencil alone, written by hand, for timing a
/// tensor's for_each over the same memory.
void jacobi_average(const double* in, double* out, std::size_t n, std::size_t pitch, std::size_t rows_per_plane);

/// Whether the baselines were built with OpenMP (else they are serial loops).
bool have_openmp();

void saxpy(float* y, const float* x, float a, std::size_t n);

template <typename T>
struct ParticleAoS {
  T px, py, pz, vx, vy, vz;
};
template <typename T>
struct ParticlesSoA {
  T *px, *py, *pz, *vx, *vy, *vz;
};
template <typename T>
void particles_aos(ParticleAoS<T>* p, std::size_t n, T dt);
template <typename T>
void particles_soa(const ParticlesSoA<T>& p, std::size_t n, T dt);
/// AoSoA, as Tiled<V> stores a row: tiles of V particles, each tile px[V] py[V] pz[V] vx[V]
/// vy[V] vz[V]; `n` is a multiple of V.
template <typename T, std::size_t V>
void particles_aosoa(T* tiles, std::size_t n, T dt);

/// One cell of the AoS fluid arrays.
template <typename T>
struct FluidAoS {
  T rho, e, u, v;
};
template <typename T>
struct FluidSoA {
  T *rho, *e, *u, *v;
};
/// `in` is (n+2) x (n+2) cells with a one-cell halo; `out` is n x n (x fastest in both).
template <typename T>
void flux_aos(const FluidAoS<T>* in, FluidAoS<T>* out, std::size_t n, T dtdx);
template <typename T>
void flux_soa(const FluidSoA<T>& in, const FluidSoA<T>& out, std::size_t n, T dtdx);
/// AoSoA, as Tiled<V> stores a row: tiles of V cells, each tile rho[V] e[V] u[V] v[V]. `in` is
/// (n+2) rows of n/V + 2 tiles (a halo row above and below, a halo tile at either end of a row,
/// of which the stencil reads one lane); `out` is n rows of n/V tiles; n is a multiple of V.
template <typename T, std::size_t V>
void flux_aosoa(const T* in, T* out, std::size_t n, T dtdx);

}  // namespace tessera::bench::baseline
