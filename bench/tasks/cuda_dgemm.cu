// The PREMA §4.1 DGEMM loop on a GPU: 100 iterations of allocate A, B and C, move the inputs
// in and run C = A B. The direct loop is the seed's naive baseline (cudaMalloc, cudaMemcpy,
// cublasDgemm, cudaDeviceSynchronize, cudaFree per iteration); the tessera loop copies the
// inputs straight to the GPU (copy_from) and submits one GPU task that calls cuBLAS on the task's stream,
// so the runtime's pools, copy streams and overlap across iterations do the rest.
#include "tasks_bench.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/task/runtime.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tasks_bench {

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("gpu dgemm: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

/// Row-major C = A B as column-major C^T = B^T A^T: cuBLAS needs no transposed copies.
void dgemm_on(cublasHandle_t h, std::size_t n, const double* a, const double* b, double* c) {
  const int m = static_cast<int>(n);
  const double one = 1.0, zero = 0.0;
  cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, b, m, a, m, &zero, c, m);
}

/// One cuBLAS handle per CUDA stream, made on first use. A handle is not safe to use from two
/// threads at once, and two tasks on one stream may be issued from two workers.
class Handles {
 public:
  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    for (auto& [stream, h] : handles_) cublasDestroy(h.handle);
  }
  void dgemm(cudaStream_t stream, std::size_t n, const double* a, const double* b, double* c) {
    std::lock_guard lock(mutex_);
    auto it = handles_.find(stream);
    if (it == handles_.end()) {
      cublasHandle_t h = nullptr;
      if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw tessera::Error("gpu dgemm: cublasCreate failed");
      cublasSetStream(h, stream);
      it = handles_.emplace(stream, Entry{h}).first;
    }
    dgemm_on(it->second.handle, n, a, b, c);
  }

 private:
  struct Entry {
    cublasHandle_t handle;
  };
  std::mutex mutex_;
  std::map<cudaStream_t, Entry> handles_;
};

/// The seed's naive loop; returns C of the last iteration in `c_out` when asked.
bool direct_cublas(cublasHandle_t h, const DgemmInputs& in, std::size_t n, int iterations, std::vector<double>* c_out) {
  const std::size_t bytes = n * n * sizeof(double);
  for (int it = 0; it < iterations; ++it) {
    double *a = nullptr, *b = nullptr, *c = nullptr;
    if (!ok(cudaMalloc(&a, bytes), "cudaMalloc") || !ok(cudaMalloc(&b, bytes), "cudaMalloc") ||
        !ok(cudaMalloc(&c, bytes), "cudaMalloc"))
      return false;
    cudaMemcpy(a, in.a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, in.b.data(), bytes, cudaMemcpyHostToDevice);
    dgemm_on(h, n, a, b, c);
    if (!ok(cudaDeviceSynchronize(), "cublasDgemm")) return false;
    if (c_out != nullptr && it + 1 == iterations) {
      c_out->resize(n * n);
      cudaMemcpy(c_out->data(), c, bytes, cudaMemcpyDeviceToHost);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  return true;
}

void tessera_cublas(tessera::TaskRuntime& rt, Handles& handles, const DgemmInputs& in, std::size_t n, int iterations,
                    std::vector<double>* c_out) {
  for (int it = 0; it < iterations; ++it) {
    tessera::HeteroObject<double> a(rt, n * n, "A"), b(rt, n * n, "B"), c(rt, n * n, "C");
    // Straight from the inputs to the GPU: one copy each, as the naive loop makes.
    a.copy_from(in.a.data(), tessera::TaskKind::gpu);
    b.copy_from(in.b.data(), tessera::TaskKind::gpu);
    rt.submit(tessera::native_task(
        "dgemm", tessera::TaskKind::gpu,
        [n, &handles](const tessera::TaskContext& ctx, const double* pa, const double* pb, double* pc) {
          handles.dgemm(static_cast<cudaStream_t>(ctx.cuda_stream()), n, pa, pb, pc);
        },
        tessera::read(a), tessera::read(b), tessera::write(c)));
    if (c_out != nullptr && it + 1 == iterations) {
      c_out->resize(n * n);
      c.copy_to(c_out->data()).get();
    }
  }
  rt.wait_all();
}

}  // namespace

bool dgemm_cuda(tessera::bench::Report& report, bool quick) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    (void)cudaGetLastError();
    std::printf("gpu dgemm skipped: no CUDA GPU here\n");
    return true;
  }
  const int iterations = quick ? 10 : 100;
  bool same = true;
  auto devices = tessera::DeviceSet::select("cuda:0");
  tessera::TaskRuntime rt(devices);
  Handles handles;
  cublasHandle_t direct = nullptr;
  if (cublasCreate(&direct) != CUBLAS_STATUS_SUCCESS) {
    std::printf("gpu dgemm skipped: cublasCreate failed\n");
    return true;
  }
  for (std::size_t n : {64, 128, 256, 512, 768, 1024}) {
    const DgemmInputs in(n);
    // Same answer first: both run the same cuBLAS routine on the same GPU.
    std::vector<double> want, got;
    if (!direct_cublas(direct, in, n, 1, &want)) break;
    tessera_cublas(rt, handles, in, n, 1, &got);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
    if (worst > 1e-12) {
      std::printf("gpu dgemm n=%zu: tessera's C differs from the direct loop's by %.3g (relative)\n", n, worst);
      same = false;
    }
    // Alternating rounds, medians: the same protocol as the CPU rows.
    std::vector<double> directs, ourses;
    for (int round = 0; round < 5; ++round) {
      directs.push_back(iterations_per_second(std::max(1, iterations / 5),
                                              [&](int k) { direct_cublas(direct, in, n, k, nullptr); }));
      ourses.push_back(iterations_per_second(std::max(1, iterations / 5),
                                             [&](int k) { tessera_cublas(rt, handles, in, n, k, nullptr); }));
    }
    report.add({"dgemm-gpu-" + std::to_string(n), "tessera", "iterations/s", median(ourses), "1/s", "cublas-naive",
                median(directs), 0});
  }
  // Figure 8 on the GPU: each runtime optimisation that has a switch turned off in turn (the
  // device and pinned pools have none in the CUDA backend), against the same naive loop.
  {
    const std::size_t n = 512;
    const DgemmInputs in(n);
    const double naive = iterations_per_second(iterations, [&](int k) { direct_cublas(direct, in, n, k, nullptr); });
    for (const RuntimeVariant& v : figure8_variants()) {
      const tessera::TaskRuntimeOptions& o = v.options;
      tessera::TaskRuntime variant(devices, o);
      Handles variant_handles;
      const double ours = iterations_per_second(
          iterations, [&](int k) { tessera_cublas(variant, variant_handles, in, n, k, nullptr); });
      report.add({"dgemm-gpu-512", std::string("tessera-") + v.name, "iterations/s", ours, "1/s", "cublas-naive",
                  naive, 0});
    }
  }
  cublasDestroy(direct);
  return same;
}

}  // namespace tasks_bench
