// The PREMA §4.1 DGEMM loop: each iteration allocates A, B and C, transfers the inputs and runs
// C = A B; 100 iterations, C never read back. tessera tasks against the direct implementation
// in the same run: OpenBLAS called directly (CPU), and a naive allocate/copy/run/synchronize
// loop on a sim device (the seed's CUDA baseline, on the device tessera simulates). Then the
// effect of each optimisation switch (figure 8) and scaling over sim:1..4 (figure 9).
#include "tasks_bench.hpp"

#include <tessera/device/device.hpp>
#include <tessera/task/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <vector>

#if defined(TESSERA_BENCH_OPENBLAS)
#include <cblas.h>
#endif

namespace tasks_bench {

namespace {

using tessera::TaskKind;

// `rows` rows of C = A B, all n x n (row major): A and C point at the first of those rows.
void gemm_rows(std::size_t n, std::size_t rows, const double* a, const double* b, double* c) {
#if defined(TESSERA_BENCH_OPENBLAS)
  const int m = static_cast<int>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), m, m, 1.0, a, m, b, m, 0.0, c, m);
#else
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
#endif
}

void gemm(std::size_t n, const double* a, const double* b, double* c) { gemm_rows(n, n, a, b, c); }

// The direct CPU loop: allocate, copy the inputs in, multiply, free.
void direct_cpu(const DgemmInputs& in, std::size_t n, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> a(n * n), b(n * n), c(n * n);
    std::memcpy(a.data(), in.a.data(), n * n * sizeof(double));
    std::memcpy(b.data(), in.b.data(), n * n * sizeof(double));
    gemm(n, a.data(), b.data(), c.data());
  }
}

// The direct loop without its allocations: buffers made once, inputs copied in and multiplied
// each iteration. Fresh 512 KiB+ vectors cost page faults on every iteration (glibc maps and
// unmaps them), which tessera's host block cache avoids; this row shows tessera against
// OpenBLAS's compute alone.
void direct_cpu_preallocated(const DgemmInputs& in, std::size_t n, int iterations) {
  std::vector<double> a(n * n), b(n * n), c(n * n);
  for (int it = 0; it < iterations; ++it) {
    std::memcpy(a.data(), in.a.data(), n * n * sizeof(double));
    std::memcpy(b.data(), in.b.data(), n * n * sizeof(double));
    gemm(n, a.data(), b.data(), c.data());
  }
}

// The same through tasks: objects, inputs written through host requests, then C = A B as
// `tiles` tasks, each the DGEMM of a block of C's rows (its own object) from all of B and its
// rows of A. On the CPU there is one tile per executor worker, each a single-threaded OpenBLAS
// call, so the tasks of one iteration share the cores the way OpenBLAS's own threads do for
// the direct loop (PREMA §4.1 splits a DGEMM into tasks the same way); a device takes one task.
void tessera_loop(tessera::TaskRuntime& rt, const DgemmInputs& in, std::size_t n, int iterations, TaskKind kind,
                  std::size_t tiles = 1) {
  const std::size_t rows_per_tile = (n + tiles - 1) / tiles;
  for (int it = 0; it < iterations; ++it) {
    tessera::HeteroObject<double> a(rt, n * n, "A"), b(rt, n * n, "B");
    std::vector<tessera::HeteroObject<double>> c;
    for (std::size_t first = 0; first < n; first += rows_per_tile)
      c.emplace_back(rt, std::min(rows_per_tile, n - first) * n, "C");
    // Inputs go where the tasks of `kind` run: the host copy, or straight to a device.
    a.copy_from(in.a.data(), kind);
    b.copy_from(in.b.data(), kind);
    for (std::size_t t = 0; t < c.size(); ++t) {
      const std::size_t first = t * rows_per_tile, rows = c[t].size() / n;
      rt.submit(tessera::native_task("dgemm", kind, [n, first, rows](const tessera::TaskContext&, const double* pa,
                                                                     const double* pb, double* pc) {
        gemm_rows(n, rows, pa + first * n, pb, pc);
      }, tessera::read(a), tessera::read(b), tessera::write(c[t])));
    }
  }
  rt.wait_all();
}

// The naive device loop of the seed's baseline, on sim:0: allocate, copy in, run, synchronize, free.
void direct_device(tessera::Device& d, const DgemmInputs& in, std::size_t n, int iterations) {
  const std::size_t bytes = n * n * sizeof(double);
  tessera::Stream& h2d = d.copy_stream(tessera::CopyDirection::host_to_device);
  tessera::Stream& s = d.compute_stream(0);
  for (int it = 0; it < iterations; ++it) {
    auto* a = static_cast<double*>(d.allocate(bytes));
    auto* b = static_cast<double*>(d.allocate(bytes));
    auto* c = static_cast<double*>(d.allocate(bytes));
    d.copy_async(a, in.a.data(), bytes, tessera::CopyDirection::host_to_device, h2d);
    d.copy_async(b, in.b.data(), bytes, tessera::CopyDirection::host_to_device, h2d);
    s.wait(h2d.record());
    s.enqueue_host([=] { gemm(n, a, b, c); }, "dgemm");
    s.synchronize();
    d.deallocate(a, bytes);
    d.deallocate(b, bytes);
    d.deallocate(c, bytes);
  }
}

tessera::SimOptions sim_with_link() {
  tessera::SimOptions o;
  o.memory_bytes = std::size_t{512} << 20;
  o.compute_streams = 4;
  // A PCIe-like link, so transfers take time and their overlap with kernels shows.
  o.copy_bytes_per_second = 6e9;
  o.copy_latency = std::chrono::microseconds(10);
  return o;
}

}  // namespace

void dgemm(tessera::bench::Report& report, bool quick) {
  const int iterations = quick ? 10 : 100;
#if defined(TESSERA_BENCH_OPENBLAS)
  {
    auto devices = tessera::DeviceSet::select("host");
    tessera::TaskRuntime rt(devices);
    const std::size_t tiles = rt.executor().num_workers();
    for (std::size_t n : {64, 128, 256, 512, 768, 1024}) {
      const DgemmInputs in(n);
      const int its = n >= 768 && quick ? 3 : iterations;
      // Each uses both cores its own way: the direct loop through OpenBLAS's threads (as many
      // as there are cores), the tasks through the executor's workers, one single-threaded
      // DGEMM of a row block each (two OpenBLAS calls that both start threads would
      // oversubscribe the cores).
      // The two alternate over 5 rounds and each reports its median round: this VM's speed
      // drifts by up to 2x within a minute, which single back-to-back timings turned into
      // ratios anywhere from 0.55 to 1.08 for the same n.
      // OpenBLAS's server threads spin for 2^28 cycles (about 0.1 s) after a call before they
      // sleep, so each side starts only once the other's threads are asleep: timed straight after
      // the direct loop, the tasks shared the 2 cores with a spinning BLAS thread (n = 256 read
      // 0.47 to 0.97). Telling OpenBLAS to sleep at once (OPENBLAS_THREAD_TIMEOUT=4) is no
      // answer: its own threads then sleep inside a call, and the direct loop ran 2-3x slower.
      auto let_threads_sleep = [] { std::this_thread::sleep_for(std::chrono::milliseconds(250)); };
      std::vector<double> directs, preallocated, ourses;
      for (int round = 0; round < 5; ++round) {
        openblas_set_num_threads(openblas_get_num_procs());
        let_threads_sleep();
        directs.push_back(iterations_per_second(std::max(1, its / 5), [&](int k) { direct_cpu(in, n, k); }));
        let_threads_sleep();
        preallocated.push_back(
            iterations_per_second(std::max(1, its / 5), [&](int k) { direct_cpu_preallocated(in, n, k); }));
        openblas_set_num_threads(1);
        let_threads_sleep();
        ourses.push_back(
            iterations_per_second(std::max(1, its / 5), [&](int k) { tessera_loop(rt, in, n, k, TaskKind::cpu, tiles); }));
      }
      const double direct = median(directs), ours = median(ourses);
      report.add({"dgemm-cpu-" + std::to_string(n), "tessera", "iterations/s", ours, "1/s", "openblas", direct, 0});
      report.add({"dgemm-cpu-" + std::to_string(n), "tessera", "iterations/s", ours, "1/s", "openblas-preallocated",
                  median(preallocated), 0});
    }
  }
  // Sim devices run kernels on their stream threads; one BLAS thread each keeps them from
  // oversubscribing the cores (the direct loop gets the same). Asked only when needed: setting
  // the number starts OpenBLAS's pool again where tessera shut it.
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
#else
  std::printf("OpenBLAS not built in (install libopenblas-dev): CPU DGEMM rows skipped; sim rows use a naive loop\n");
#endif

  // Figure 8 on a sim device: tessera with every optimisation, then with each switched off,
  // against the naive device loop.
  {
    const std::size_t n = 256;
    const DgemmInputs in(n);
    auto devices = tessera::DeviceSet::simulated(1, sim_with_link());
    const double direct = iterations_per_second(iterations, [&](int k) { direct_device(devices.accelerator(0), in, n, k); });
    for (const RuntimeVariant& v : figure8_variants()) {
      const tessera::TaskRuntimeOptions& o = v.options;
      tessera::TaskRuntime rt(devices, o);
      const double ours = iterations_per_second(iterations, [&](int k) { tessera_loop(rt, in, n, k, TaskKind::gpu); });
      report.add({"dgemm-sim-256", std::string("tessera-") + v.name, "iterations/s", ours, "1/s", "direct-sim", direct, 0});
    }
    std::printf("pinned and device pools: always on in the CUDA backend (no switch); their effect needs a GPU run\n");
  }

  // Figure 9: 64x64 DGEMM tasks over sim:1..4, with and without dedicated submission threads.
  for (bool dedicated : {false, true}) {
    const std::size_t n = 64;
    const DgemmInputs in(n);
    const int tasks = quick ? 200 : 2000;
    double one = 0;
    for (std::size_t k = 1; k <= 4; ++k) {
      auto devices = tessera::DeviceSet::simulated(k, sim_with_link());
      tessera::TaskRuntimeOptions o;
      o.dedicated_submit_threads = dedicated;
      o.scheduler = tessera::locality_scheduler();
      tessera::TaskRuntime rt(devices, o);
      const double rate = iterations_per_second(tasks, [&](int its) { tessera_loop(rt, in, n, its, TaskKind::gpu); });
      if (k == 1) one = rate;
      report.add({"dgemm64-sim:" + std::to_string(k), dedicated ? "tessera-dedicated" : "tessera-pumps", "iterations/s", rate,
                  "1/s", "sim:1", one, 0});
    }
  }
}

}  // namespace tasks_bench
