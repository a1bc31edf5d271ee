// GPU side of SUITE=memory. Baselines are the bare CUDA runtime in the same run: cudaMemcpy on
// pageable and pinned buffers for copies, a loop of <<<1,1>>> launches (and the same loop captured
// by hand into a CUDA graph) for the node overhead, cudaMallocAsync for the device pool.
#include "cuda_benchmarks.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/bytes.hpp>
#include <tessera/sched/executor.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tessera::bench {

namespace {

__global__ void empty_kernel() {}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("cuda benchmarks: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

void copy_bandwidth(Report& report, Device& gpu, bool quick) {
  const std::size_t bytes = quick ? (std::size_t{64} << 20) : (std::size_t{256} << 20);
  const int reps = quick ? 3 : 10;
  const std::string name = "gpu-copy-" + format_bytes(bytes);
  void* dev = gpu.allocate(bytes);
  void* pinned = gpu.try_allocate_pinned_host(bytes);
  std::vector<char> pageable(bytes, 'p');
  void* raw_dev = nullptr;
  void* raw_pinned = nullptr;
  if (!check(cudaMalloc(&raw_dev, bytes), "cudaMalloc") || !check(cudaMallocHost(&raw_pinned, bytes), "cudaMallocHost")) return;

  auto gbs = [&](double seconds) { return static_cast<double>(bytes) / seconds / 1e9; };
  // Baselines: the bare runtime, synchronous copies.
  const double base_pageable_h2d = gbs(median_seconds([&] { cudaMemcpy(raw_dev, pageable.data(), bytes, cudaMemcpyHostToDevice); }, reps));
  const double base_pinned_h2d = gbs(median_seconds([&] { cudaMemcpy(raw_dev, raw_pinned, bytes, cudaMemcpyHostToDevice); }, reps));
  const double base_pinned_d2h = gbs(median_seconds([&] { cudaMemcpy(raw_pinned, raw_dev, bytes, cudaMemcpyDeviceToHost); }, reps));
  report.add({name, "cudaMemcpy-pageable-h2d", "bandwidth", base_pageable_h2d, "GB/s", "", 0, 0});
  report.add({name, "cudaMemcpy-pinned-h2d", "bandwidth", base_pinned_h2d, "GB/s", "", 0, 0});
  report.add({name, "cudaMemcpy-pinned-d2h", "bandwidth", base_pinned_d2h, "GB/s", "", 0, 0});

  auto through_tessera = [&](void* dst, const void* src, CopyDirection dir) {
    Stream& s = gpu.copy_stream(dir);
    return gbs(median_seconds([&] {
      gpu.copy_async(dst, src, bytes, dir, s);
      s.synchronize();
    }, reps));
  };
  report.add({name, "tessera-pageable-h2d", "bandwidth", through_tessera(dev, pageable.data(), CopyDirection::host_to_device),
              "GB/s", "cudaMemcpy-pageable-h2d", base_pageable_h2d, 0});
  if (pinned != nullptr) {
    report.add({name, "tessera-pinned-h2d", "bandwidth", through_tessera(dev, pinned, CopyDirection::host_to_device), "GB/s",
                "cudaMemcpy-pinned-h2d", base_pinned_h2d, 0});
    report.add({name, "tessera-pinned-d2h", "bandwidth", through_tessera(pinned, dev, CopyDirection::device_to_host), "GB/s",
                "cudaMemcpy-pinned-d2h", base_pinned_d2h, 0});
    gpu.deallocate_pinned_host(pinned, bytes);
  } else {
    std::printf("cuda benchmarks: the pinned pool of %s has no room for %s; pinned copies skipped\n", gpu.name().c_str(),
                format_bytes(bytes).c_str());
  }
  cudaFree(raw_dev);
  cudaFreeHost(raw_pinned);
  gpu.deallocate(dev, bytes);
}

void node_launch_overhead(Report& report, Device& gpu, bool quick) {
  const std::size_t nodes = quick ? 2000 : 20000;
  const int reps = quick ? 3 : 7;
  Stream& stream = gpu.compute_stream(0);
  auto cs = static_cast<cudaStream_t>(stream.native_handle());
  ExecutorOptions options;
  options.num_devices = 1;
  Executor ex(options);
  NodeGraph g("empty-kernels");
  Node* prev = nullptr;
  for (std::size_t i = 0; i < nodes; ++i) {
    Node& n = g.emplace_on(stream, [](Stream& s) { empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(s.native_handle())>>>(); });
    if (prev != nullptr) prev->precede(n);
    prev = &n;
  }
  ex.run(g).get();
  const double bare = median_seconds([&] {
    for (std::size_t i = 0; i < nodes; ++i) empty_kernel<<<1, 1, 0, cs>>>();
    cudaStreamSynchronize(cs);
  }, reps);
  const double via_nodes = median_seconds([&] { ex.run(g).get(); }, reps);
  // The same chain captured: run 1 plain, run 2 records, the timed runs replay one CUDA graph.
  g.capture();
  ex.run_n(g, 2).get();
  const double captured = median_seconds([&] { ex.run(g).get(); }, reps);
  // What a CUDA programmer writes by hand for the same: capture the launch loop once, replay.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
  for (std::size_t i = 0; i < nodes; ++i) empty_kernel<<<1, 1, 0, cs>>>();
  cudaStreamEndCapture(cs, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, cs);
  cudaStreamSynchronize(cs);
  const double hand_graph = median_seconds([&] {
    cudaGraphLaunch(exec, cs);
    cudaStreamSynchronize(cs);
  }, reps);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const double n = static_cast<double>(nodes);
  const std::string name = "gpu-node-chain-" + std::to_string(nodes) + "-empty-kernel";
  report.add({name, "bare-kernel-launch-loop", "per-launch", bare * 1e9 / n, "ns", "", 0, 0});
  report.add({name, "tessera-device-node", "per-launch", via_nodes * 1e9 / n, "ns", "bare-kernel-launch-loop", bare * 1e9 / n, 0});
  report.add({name, "tessera-captured-graph", "per-launch", captured * 1e9 / n, "ns", "bare-kernel-launch-loop", bare * 1e9 / n, 0});
  report.add({name, "hand-captured-cuda-graph", "per-launch", hand_graph * 1e9 / n, "ns", "bare-kernel-launch-loop", bare * 1e9 / n, 0});
  std::printf("gpu node chain (%s): captured run records %zu time(s)%s%s\n", gpu.name().c_str(), g.recordings(),
              g.capture_refusal().empty() ? "" : ", refused: ", g.capture_refusal().c_str());

  // One node per run: each run ends with the node's completion reaching the executor, the
  // path TESSERA_CUDA_COMPLETION chooses (a waiting thread, or a host function in the stream).
  NodeGraph one("one-kernel");
  one.emplace_on(stream, [](Stream& s) { empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(s.native_handle())>>>(); });
  const std::size_t runs = quick ? 500 : 5000;
  ex.run_n(one, 10).get();
  const double bare_sync = median_seconds([&] {
    for (std::size_t i = 0; i < runs; ++i) {
      empty_kernel<<<1, 1, 0, cs>>>();
      cudaStreamSynchronize(cs);
    }
  }, reps);
  const double one_runs = median_seconds([&] {
    for (std::size_t i = 0; i < runs; ++i) ex.run(one).get();
  }, reps);
  const char* mode = std::getenv("TESSERA_CUDA_COMPLETION");
  const std::string completion = mode != nullptr && std::string(mode) == "host-function" ? "host-function" : "event-thread";
  const double r = static_cast<double>(runs);
  report.add({"gpu-one-node-run", "launch-and-synchronize", "per-run", bare_sync * 1e9 / r, "ns", "", 0, 0});
  report.add({"gpu-one-node-run", "tessera-run-" + completion, "per-run", one_runs * 1e9 / r, "ns",
              "launch-and-synchronize", bare_sync * 1e9 / r, 0});
}

// The device's pool (one cudaMalloc carved at start-up) against CUDA's stream-ordered allocator,
// which a CUDA programmer would use for per-step scratch: allocation+free pairs of log-uniform
// sizes 256 B..1 MiB, 64 live at a time, the same sequence for both. cudaMallocAsync's pool keeps
// its memory (release threshold raised), so neither side returns memory to the driver.
void allocation_pairs(Report& report, Device& gpu, bool quick) {
  const std::size_t pairs = quick ? 20000 : 200000;
  const int reps = quick ? 3 : 7;
  constexpr std::size_t live = 64;
  std::vector<std::size_t> sizes(pairs);
  std::uint64_t x = 88172645463325252ull;
  for (std::size_t& b : sizes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = std::size_t{256} << (x % 13);  // 256 B .. 1 MiB
  }
  Stream& stream = gpu.compute_stream(0);
  auto cs = static_cast<cudaStream_t>(stream.native_handle());
  cudaMemPool_t pool = nullptr;
  if (!check(cudaDeviceGetDefaultMemPool(&pool, gpu.ordinal()), "cudaDeviceGetDefaultMemPool")) return;
  std::uint64_t threshold = UINT64_MAX;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  std::vector<void*> slots(live, nullptr);
  std::vector<std::size_t> slot_bytes(live, 0);
  const double async_s = median_seconds([&] {
    for (std::size_t i = 0; i < pairs; ++i) {
      void*& p = slots[i % live];
      if (p != nullptr) cudaFreeAsync(p, cs);
      cudaMallocAsync(&p, sizes[i], cs);
    }
    for (void*& p : slots) {
      cudaFreeAsync(p, cs);
      p = nullptr;
    }
    cudaStreamSynchronize(cs);
  }, reps);
  const double pool_s = median_seconds([&] {
    for (std::size_t i = 0; i < pairs; ++i) {
      const std::size_t k = i % live;
      if (slots[k] != nullptr) gpu.deallocate(slots[k], slot_bytes[k]);
      slots[k] = gpu.allocate(sizes[i]);
      slot_bytes[k] = sizes[i];
    }
    for (std::size_t k = 0; k < live; ++k) {
      gpu.deallocate(slots[k], slot_bytes[k]);
      slots[k] = nullptr;
    }
  }, reps);
  const double n = static_cast<double>(pairs);
  const std::string name = "gpu-alloc-free-256B-1MiB-64live";
  report.add({name, "cudaMallocAsync-cudaFreeAsync", "per-pair", async_s * 1e9 / n, "ns", "", 0, 0});
  report.add({name, "tessera-device-pool", "per-pair", pool_s * 1e9 / n, "ns", "cudaMallocAsync-cudaFreeAsync",
              async_s * 1e9 / n, 0});
}

}  // namespace

void run_cuda_benchmarks(Report& report, bool quick) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cuda benchmarks skipped: no CUDA device on this machine\n");
    return;
  }
  auto devices = DeviceSet::select("cuda:0");
  Device& gpu = devices.accelerator(0);
  gpu.make_current();
  copy_bandwidth(report, gpu, quick);
  node_launch_overhead(report, gpu, quick);
  allocation_pairs(report, gpu, quick);
}

}  // namespace tessera::bench
