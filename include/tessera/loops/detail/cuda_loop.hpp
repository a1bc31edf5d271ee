#pragma once
// Internal, nvcc only: a recorded loop's slab as a CUDA kernel. Sites map to threads, x fastest,
// so a warp reads consecutive elements of a row; y and z stride over the grid where the range is
// taller than a grid may be. A loop that reduces runs a thread per outermost index instead, each
// visiting its sites in the order the host does, so the partials (and the result) have the
// host's bits.

#include <tessera/loops/par_loop.hpp>

// Only nvcc sees the kernels; par_loop.hpp declares the launch, which a host compiler's build
// never calls (kernel_launch.hpp's cuda_body).
#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <memory>

namespace tessera::loops::detail {

template <typename K, typename... V>
__global__ void loop_sites_kernel(K kernel, LoopBounds b, V... views) {
  const int i = b.lo[0] + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= b.hi[0]) return;
  for (int k = b.lo[2] + int(blockIdx.z * blockDim.z + threadIdx.z); k < b.hi[2]; k += int(gridDim.z * blockDim.z))
    for (int j = b.lo[1] + int(blockIdx.y * blockDim.y + threadIdx.y); j < b.hi[1]; j += int(gridDim.y * blockDim.y)) {
      const int site[3] = {i, j, k};
      const int outer = site[b.outer];
      kernel(views.at(i, j, k, outer, site)...);
    }
}

template <typename K, typename... V>
__global__ void loop_rows_kernel(K kernel, LoopBounds b, V... views) {
  const int o = b.lo[b.outer] + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (o >= b.hi[b.outer]) return;
  (views.start(o), ...);
  int lo[3] = {b.lo[0], b.lo[1], b.lo[2]}, hi[3] = {b.hi[0], b.hi[1], b.hi[2]};
  lo[b.outer] = o;
  hi[b.outer] = o + 1;
  for (int k = lo[2]; k < hi[2]; ++k)
    for (int j = lo[1]; j < hi[1]; ++j)
      for (int i = lo[0]; i < hi[0]; ++i) {
        const int site[3] = {i, j, k};
        kernel(views.at(i, j, k, o, site)...);
      }
}

/// Two events around a launch; the timer they give reads them once the stream has passed both.
struct LaunchTimer {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~LaunchTimer() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

template <bool RowsPerThread, typename K, typename... V>
const char* launch_loop_on_cuda(void* native_stream, const K& kernel, const LoopBounds& b,
                                std::function<double()>* timer, const V&... views) {
  auto stream = static_cast<cudaStream_t>(native_stream);
  std::shared_ptr<LaunchTimer> events;
  if (timer != nullptr) {
    events = std::make_shared<LaunchTimer>();
    if (cudaEventCreate(&events->start) != cudaSuccess || cudaEventCreate(&events->stop) != cudaSuccess ||
        cudaEventRecord(events->start, stream) != cudaSuccess)
      return cudaGetErrorString(cudaGetLastError());
  }
  if constexpr (RowsPerThread) {
    const unsigned rows = unsigned(b.hi[b.outer] - b.lo[b.outer]);
    constexpr unsigned threads = 64;
    loop_rows_kernel<<<(rows + threads - 1) / threads, threads, 0, stream>>>(kernel, b, views...);
  } else {
    const unsigned nx = unsigned(b.hi[0] - b.lo[0]), ny = unsigned(b.hi[1] - b.lo[1]), nz = unsigned(b.hi[2] - b.lo[2]);
    const dim3 block(nx >= 128 ? 128 : 32, nx >= 128 ? 2 : 8, 1);
    const dim3 grid((nx + block.x - 1) / block.x, std::min((ny + block.y - 1) / block.y, 65535u), std::min(nz, 65535u));
    loop_sites_kernel<<<grid, block, 0, stream>>>(kernel, b, views...);
  }
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
  if (timer != nullptr) {
    if (cudaEventRecord(events->stop, stream) != cudaSuccess) return cudaGetErrorString(cudaGetLastError());
    *timer = [events] {
      float ms = 0.0f;
      cudaEventElapsedTime(&ms, events->start, events->stop);
      return double(ms) * 1e-3;
    };
  }
  return nullptr;
}

}  // namespace tessera::loops::detail

#endif  // __CUDACC__
