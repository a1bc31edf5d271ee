// parallel_for against a hand-written OpenMP loop: SAXPY on 10^8 floats (bandwidth) and the
// launch cost of a parallel_for over 1 024 elements. This file alone is built with -fopenmp.
#include "shapes.hpp"

#include "common/report.hpp"

#include <tessera/sched/executor.hpp>

#include <cstring>

#if defined(TESSERA_BENCH_OPENMP)
#include <omp.h>
#endif
#if defined(TESSERA_BENCH_TBB)
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#endif

namespace tessera::bench {

void run_loop_benchmarks(Report& report, bool quick) {
  Executor ex;
  const std::size_t n = quick ? 20'000'000 : 100'000'000;
  const int reps = quick ? 3 : 9;
  std::vector<float> x(n), y(n);
  const float a = 1.5f;
  ex.parallel_for(0, n, [&](std::size_t i) {  // first touch in parallel, as the loops will read
    x[i] = static_cast<float>(i % 1024) * 0.001f;
    y[i] = 1.0f;
  });
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(n);  // read x, read y, write y

  // The same loop body for both: raw pointers, no restrict.
  float* yp = y.data();
  const float* xp = x.data();
  const double t_ours =
      median_seconds([&] { ex.parallel_for(0, n, [yp, xp, a](std::size_t i) { yp[i] = a * xp[i] + yp[i]; }); }, reps);
#if defined(TESSERA_BENCH_OPENMP)
  const double t_omp = median_seconds(
      [&] {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) {  // hot-loop: saxpy
          yp[i] = a * xp[i] + yp[i];
        }
      },
      reps);
  report.add({"saxpy-" + std::to_string(n), "openmp", "bandwidth", bytes / t_omp / 1e9, "GB/s", "", 0, 0});
  report.add({"saxpy-" + std::to_string(n), "tessera", "bandwidth", bytes / t_ours / 1e9, "GB/s", "openmp",
              bytes / t_omp / 1e9, 0});
#else
  report.add({"saxpy-" + std::to_string(n), "tessera", "bandwidth", bytes / t_ours / 1e9, "GB/s", "", 0, 0});
#endif

  // Launch cost: many back-to-back loops over 1 024 elements of trivial work.
  const std::size_t m = 1024;
  const int launches = quick ? 20000 : 200000;
  std::vector<float> z(m, 0.0f);
  auto per_launch = [&](auto&& launch) {
    return median_seconds(
               [&] {
                 for (int k = 0; k < launches; ++k) launch();
               },
               reps) *
           1e9 / launches;
  };
  const double ours = per_launch([&] { ex.parallel_for(0, m, [&](std::size_t i) { z[i] += 1.0f; }); });
  const double serial = per_launch([&] {
    for (std::size_t i = 0; i < m; ++i) z[i] += 1.0f;
    asm volatile("" ::: "memory");
  });
  report.add({"parallel_for-1024", "serial-loop", "launch", serial, "ns", "", 0, 0});
#if defined(TESSERA_BENCH_OPENMP)
  const double omp = per_launch([&] {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < m; ++i) {  // hot-loop: launch
      z[i] += 1.0f;
    }
  });
  report.add({"parallel_for-1024", "openmp", "launch", omp, "ns", "", 0, 0});
  report.add({"parallel_for-1024", "tessera", "launch", ours, "ns", "openmp", omp, 0});
#endif
#if defined(TESSERA_BENCH_TBB)
  {
    oneapi::tbb::global_control limit(oneapi::tbb::global_control::max_allowed_parallelism, ex.num_workers());
    const double tbb = per_launch(
        [&] { oneapi::tbb::parallel_for(std::size_t{0}, m, [&](std::size_t i) { z[i] += 1.0f; }); });
    report.add({"parallel_for-1024", "tbb", "launch", tbb, "ns", "", 0, 0});
    report.add({"parallel_for-1024", "tessera", "launch", ours, "ns", "tbb", tbb, 0});
  }
#endif
  report.add({"parallel_for-1024", "tessera", "launch", ours, "ns", "serial-loop", serial, 0});
}

}  // namespace tessera::bench
