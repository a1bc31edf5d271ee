#pragma once
// The CUDA launch of a flat kernel of a flow firing: a grid-striding loop over [0, n). Only nvcc
// sees the body; a host compiler gets the declaration, which Context::launch never lets it call
// (kernel_launch.hpp's cuda_body).

#include <cstddef>

namespace tessera::flow::detail {

/// Launches `body(i)` for i in [0, n) on the cudaStream_t `native_stream`; returns CUDA's error
/// text when the launch failed, nullptr when it was queued.
template <typename Body>
const char* launch_flat_on_cuda(void* native_stream, std::size_t n, const Body& body);

}  // namespace tessera::flow::detail

#if defined(__CUDACC__)

#include <cuda_runtime.h>

namespace tessera::flow::detail {

template <typename Body>
__global__ void flat_kernel(std::size_t n, Body body) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) body(i);
}

template <typename Body>
const char* launch_flat_on_cuda(void* native_stream, std::size_t n, const Body& body) {
  constexpr unsigned threads = 256;
  std::size_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535u * 16u) blocks = 65535u * 16u;  // grid-striding covers the rest
  flat_kernel<<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(native_stream)>>>(n, body);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace tessera::flow::detail

#endif
