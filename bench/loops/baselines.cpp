// The OpenMP baselines (see baselines.hpp). This file alone is built with -fopenmp.
#include "baselines.hpp"

namespace loops_baseline {

bool have_openmp() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

void jacobi_chain(double* u, double* u2, const double* f, int nx, int ny, int iterations, double dx, double dy) {
  const std::ptrdiff_t w = nx + 2;
  for (int it = 0; it < iterations; ++it) {
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= ny; ++j) {
      const double* __restrict in = u + j * w;
      const double* __restrict ff = f + j * w;
      double* __restrict out = u2 + j * w;
#pragma omp simd
      for (int i = 1; i <= nx; ++i) {  // hot-loop: jacobi
        out[i] = ((in[i - 1] + in[i + 1]) * dx * dx + (in[i - w] + in[i + w]) * dy * dy - dx * dx * dy * dy * ff[i]) /
                 (2.0 * (dx * dx + dy * dy));
      }
    }
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= ny; ++j) {
      const double* __restrict in = u2 + j * w;
      double* __restrict out = u + j * w;
#pragma omp simd
      for (int i = 1; i <= nx; ++i) {  // hot-loop: jacobi-copy
        out[i] = in[i];
      }
    }
  }
}

namespace {

void seven_point(const double* a, double* b, int n) {
  const std::ptrdiff_t sy = n + 2, sz = sy * sy;
#pragma omp parallel for schedule(static)
  for (int k = 1; k <= n; ++k)
    for (int j = 1; j <= n; ++j) {
      const double* __restrict in = a + k * sz + j * sy;
      double* __restrict out = b + k * sz + j * sy;
#pragma omp simd
      for (int i = 1; i <= n; ++i) {  // hot-loop: seven-point
        out[i] = -6.0 * in[i] + in[i + 1] + in[i - 1] + in[i + sy] + in[i - sy] + in[i + sz] + in[i - sz];
      }
    }
}

}  // namespace

void seven_point_chain(double* a, double* b, int n, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    seven_point(a, b, n);
    seven_point(b, a, n);
  }
}

}  // namespace loops_baseline
