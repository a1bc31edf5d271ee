// The OpenMP baselines (see baselines.hpp). This file alone is built with -fopenmp; tessera's
// kernels are in saxpy.cpp, particles.cpp, flux.cpp and jacobi.cpp, built with the same -O3
// -march=native.
#include "baselines.hpp"

#include "kernels.hpp"

#include "jacobi3d/jacobi.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace tessera::bench {

namespace baseline {

bool have_openmp() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

double jacobi_steps(jacobi3d::BlockGrid* blocks, std::size_t count, bool one_thread) {
  double err = 0;
#pragma omp parallel for schedule(static) reduction(max : err) if (!one_thread)
  for (std::size_t b = 0; b < count; ++b) err = std::max(err, jacobi3d::step(blocks[b]));
  return err;
}

void jacobi_average(const double* in, double* out, std::size_t n, std::size_t pitch, std::size_t rows_per_plane) {
  const auto sy = static_cast<std::ptrdiff_t>(pitch), sz = sy * static_cast<std::ptrdiff_t>(rows_per_plane);
  for (std::size_t k = 1; k <= n; ++k)
    for (std::size_t j = 1; j <= n; ++j) {
      const double* c = in + 1 + sy * static_cast<std::ptrdiff_t>(j) + sz * static_cast<std::ptrdiff_t>(k);
      double* o = out + 1 + sy * static_cast<std::ptrdiff_t>(j) + sz * static_cast<std::ptrdiff_t>(k);
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) {  // hot-loop: jacobi-average
        o[i] = (c[i] + c[i - 1] + c[i + 1] + c[i - sy] + c[i + sy] + c[i - sz] + c[i + sz]) / 7.0;
      }
    }
}

void saxpy(float* y, const float* x, float a, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: saxpy
    y[i] = a * x[i] + y[i];
  }
}

template <typename T>
void particles_aos(ParticleAoS<T>* p, std::size_t n, T dt) {
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: particles-aos
    p[i].px += p[i].vx * dt;
    p[i].py += p[i].vy * dt;
    p[i].pz += p[i].vz * dt;
  }
}

template <typename T>
void particles_soa(const ParticlesSoA<T>& p, std::size_t n, T dt) {
  T* __restrict px = p.px;
  T* __restrict py = p.py;
  T* __restrict pz = p.pz;
  const T* __restrict vx = p.vx;
  const T* __restrict vy = p.vy;
  const T* __restrict vz = p.vz;
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: particles-soa
    px[i] += vx[i] * dt;
    py[i] += vy[i] * dt;
    pz[i] += vz[i] * dt;
  }
}

template <typename T, std::size_t V>
void particles_aosoa(T* tiles, std::size_t n, T dt) {
  const std::size_t count = n / V;
#pragma omp parallel for schedule(static)
  for (std::size_t t = 0; t < count; ++t) {
    T* __restrict p = tiles + t * 6 * V;
    const T* __restrict v = p + 3 * V;
#pragma omp simd
    for (std::size_t l = 0; l < V; ++l) {  // hot-loop: particles-aosoa
      p[l] += v[l] * dt;
      p[V + l] += v[V + l] * dt;
      p[2 * V + l] += v[2 * V + l] * dt;
    }
  }
}

template <typename T>
void flux_aos(const FluidAoS<T>* in, FluidAoS<T>* out, std::size_t n, T dtdx) {
  const std::size_t w = n + 2;
  auto load = [](const FluidAoS<T>& s) { return conserved(s.rho, s.e, s.u, s.v); };
#pragma omp parallel for schedule(static)
  for (std::size_t j = 0; j < n; ++j) {
    const FluidAoS<T>* row = in + (j + 1) * w + 1;
    FluidAoS<T>* o = out + j * n;
    // ivdep, not `omp simd`: GCC 12 gives each simd lane its own copy of the inlined flux's
    // by-reference temporaries, whose addressing it then cannot analyse, and left the float loop
    // scalar (the double one vectorised either way).
#pragma GCC ivdep
    for (std::size_t i = 0; i < n; ++i) {  // hot-loop: flux-aos
      const Conserved<T> d = flux_difference(load(row[i]), load(row[i - 1]), load(row[i + 1]), load(row[i - w]),
                                             load(row[i + w]), dtdx);
      o[i] = {d.rho, d.e, d.mx, d.my};
    }
  }
}

template <typename T>
void flux_soa(const FluidSoA<T>& in, const FluidSoA<T>& out, std::size_t n, T dtdx) {
  const std::size_t w = n + 2;
#pragma omp parallel for schedule(static)
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t r = (j + 1) * w + 1;
    const T* __restrict rho = in.rho + r;
    const T* __restrict e = in.e + r;
    const T* __restrict u = in.u + r;
    const T* __restrict v = in.v + r;
    T* __restrict orho = out.rho + j * n;
    T* __restrict oe = out.e + j * n;
    T* __restrict ou = out.u + j * n;
    T* __restrict ov = out.v + j * n;
    auto at = [&](std::ptrdiff_t k) { return conserved(rho[k], e[k], u[k], v[k]); };
    const std::ptrdiff_t sw = static_cast<std::ptrdiff_t>(w);
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {  // hot-loop: flux-soa
      const std::ptrdiff_t k = static_cast<std::ptrdiff_t>(i);
      const Conserved<T> d = flux_difference(at(k), at(k - 1), at(k + 1), at(k - sw), at(k + sw), dtdx);
      orho[i] = d.rho;
      oe[i] = d.e;
      ou[i] = d.mx;
      ov[i] = d.my;
    }
  }
}

// The loop an engineer who chose AoSoA would write for a stencil along x: a lane's x-neighbour
// at a tile edge lies in the next tile, which a lane loop cannot load as a vector, so each
// tile's four runs are first copied with one neighbour on either side into a (V+2)-wide buffer.
// y-neighbours are the same lanes of the rows above and below, contiguous as they are. (Reading
// the neighbours through tile/lane arithmetic instead left the lane loop scalar: 0.1 of the SoA
// loop here.) The next tile is copied before this one runs: copied just before use, the lane
// loop's first loads waited on the copy's stores (a load that straddles two stores is not
// forwarded), and the loop ran at 0.6-0.7 of the SoA loop rather than 0.8-0.95 (one thread).
// `GCC unroll 1` keeps the lane loop a loop for the vectoriser, as in tessera.
template <typename T, std::size_t V>
void flux_aosoa(const T* in, T* out, std::size_t n, T dtdx) {
  const std::size_t tiles = n / V, in_row = (tiles + 2) * 4 * V, out_row = tiles * 4 * V;
#pragma omp parallel for schedule(static)
  for (std::size_t j = 0; j < n; ++j) {
    const T* row = in + (j + 1) * in_row;
    alignas(64) T staged[2][4][V + 2];
    auto stage = [&](std::size_t t, T (*x)[V + 2]) {
      for (std::size_t m = 0; m < 4; ++m) {
        x[m][0] = row[(t - 1) * 4 * V + m * V + V - 1];
        for (std::size_t l = 0; l < V; ++l) x[m][l + 1] = row[t * 4 * V + m * V + l];
        x[m][V + 1] = row[(t + 1) * 4 * V + m * V];
      }
    };
    if (tiles > 0) stage(1, staged[1]);
    for (std::size_t t = 1; t <= tiles; ++t) {
      T(*x)[V + 2] = staged[t & 1];
      if (t < tiles) stage(t + 1, staged[(t + 1) & 1]);
      const T* __restrict below = row - in_row + t * 4 * V;
      const T* __restrict above = row + in_row + t * 4 * V;
      T* __restrict o = out + j * out_row + (t - 1) * 4 * V;
      auto at = [&](std::size_t l) { return conserved(x[0][l], x[1][l], x[2][l], x[3][l]); };
      auto of = [](const T* p, std::size_t l) { return conserved(p[l], p[V + l], p[2 * V + l], p[3 * V + l]); };
#pragma GCC ivdep
#pragma GCC unroll 1
      for (std::size_t l = 0; l < V; ++l) {  // hot-loop: flux-aosoa
        const Conserved<T> d = flux_difference(at(l + 1), at(l), at(l + 2), of(below, l), of(above, l), dtdx);
        o[l] = d.rho;
        o[V + l] = d.e;
        o[2 * V + l] = d.mx;
        o[3 * V + l] = d.my;
      }
    }
  }
}

template void particles_aos<float>(ParticleAoS<float>*, std::size_t, float);
template void particles_aos<double>(ParticleAoS<double>*, std::size_t, double);
template void particles_soa<float>(const ParticlesSoA<float>&, std::size_t, float);
template void particles_soa<double>(const ParticlesSoA<double>&, std::size_t, double);
template void particles_aosoa<float, 8>(float*, std::size_t, float);
template void particles_aosoa<float, 16>(float*, std::size_t, float);
template void particles_aosoa<double, 8>(double*, std::size_t, double);
template void particles_aosoa<double, 16>(double*, std::size_t, double);
template void flux_aos<float>(const FluidAoS<float>*, FluidAoS<float>*, std::size_t, float);
template void flux_aos<double>(const FluidAoS<double>*, FluidAoS<double>*, std::size_t, double);
template void flux_soa<float>(const FluidSoA<float>&, const FluidSoA<float>&, std::size_t, float);
template void flux_soa<double>(const FluidSoA<double>&, const FluidSoA<double>&, std::size_t, double);
template void flux_aosoa<float, 8>(const float*, float*, std::size_t, float);
template void flux_aosoa<float, 16>(const float*, float*, std::size_t, float);

}  // namespace baseline
}  // namespace tessera::bench
