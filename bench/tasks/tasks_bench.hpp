#pragma once
// SUITE=tasks: the pieces main.cpp runs.

#include "common/report.hpp"

#include <tessera/task/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace tasks_bench {

/// Nanoseconds per task, submit to completion, for the three shapes.
struct Shapes {
  double chain = 0, independent = 0, tree = 0;
};

constexpr int chain_tasks = 100000;
constexpr int independent_tasks = 100000;
constexpr int tree_leaves = 1024;  // 2047 tasks reduce 2048 values

Shapes tessera_overhead(bool quick);
/// StarPU with its CPU workers, the same shapes with STARPU_RW / STARPU_R; false without StarPU.
bool starpu_overhead(bool quick, Shapes& out);

void dgemm(tessera::bench::Report& report, bool quick);
/// The DGEMM loop on a GPU through cuBLAS (CUDA builds); false when tessera's C differs.
bool dgemm_cuda(tessera::bench::Report& report, bool quick);

/// The DGEMM loop's inputs A and B, n x n, row major, with values exact in double.
struct DgemmInputs {
  std::vector<double> a, b;
  explicit DgemmInputs(std::size_t n) : a(n * n), b(n * n) {
    for (std::size_t i = 0; i < n * n; ++i) {
      a[i] = static_cast<double>(i % 7) * 0.5;
      b[i] = static_cast<double>(i % 5) * 0.25;
    }
  }
};

/// Runs `loop(1)` to warm up (pools, first touch, library threads and handles), then times
/// `loop(iterations)`.
template <class F>
double iterations_per_second(int iterations, F&& loop) {
  loop(1);
  const auto t0 = std::chrono::steady_clock::now();
  loop(iterations);
  return iterations / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Figure 8's variants: every optimisation on, then each switch off in turn.
struct RuntimeVariant {
  const char* name;
  tessera::TaskRuntimeOptions options;
};
inline std::vector<RuntimeVariant> figure8_variants() {
  std::vector<RuntimeVariant> v(4);
  v[0].name = "all-on";
  v[1].name = "one-compute-stream";
  v[1].options.compute_streams = 1;
  v[2].name = "no-copy-stream";
  v[2].options.separate_copy_streams = false;
  v[3].name = "dedicated-thread";
  v[3].options.dedicated_submit_threads = true;
  return v;
}

}  // namespace tasks_bench
