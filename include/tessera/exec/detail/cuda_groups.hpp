#pragma once
// The kernel engine's CUDA backend for Group kernels: one CUDA block per group, one thread per
// item, the kernel's shared scratch in dynamic shared memory. Only nvcc sees the bodies; a host
// compiler gets the declaration, which kernel_launch.hpp's cuda_body never lets it call.

#include <cstddef>
#include <string>

#include "tessera/exec/detail/kernel_launch.hpp"
#include "tessera/exec/grid.hpp"
#include "tessera/exec/group.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace tessera::detail {

/// Enqueues `kernel(group, args...)` over `grid` on the cudaStream_t `native_stream` of `device`
/// (current on this thread). Throws tessera::Error, naming `work`, for a grid a GPU cannot run or
/// a failed launch.
template <class K, class... R>
void launch_groups_on_cuda(void* native_stream, const Device& device, const std::string& work, const Grid& grid,
                           std::size_t shared_bytes, const K& kernel, const R&... args);

#if defined(__CUDACC__)

template <class K, class... R>
__global__ void group_kernel_entry(K kernel, Dim3 groups, Dim3 items, R... r) {
  extern __shared__ __align__(16) unsigned char tessera_group_shared[];
  const Group g(Dim3{blockIdx.x, blockIdx.y, blockIdx.z}, groups, items, tessera_group_shared);
  kernel(g, r...);
}

template <class K, class... R>
void launch_groups_on_cuda(void* native_stream, const Device& device, const std::string& work, const Grid& grid,
                           std::size_t shared_bytes, const K& kernel, const R&... args) {
  check_cuda_launch(work, grid, shared_bytes);
  const dim3 blocks(unsigned(grid.groups.x), unsigned(grid.groups.y), unsigned(grid.groups.z));
  const dim3 threads(unsigned(grid.items.x), unsigned(grid.items.y), unsigned(grid.items.z));
  group_kernel_entry<<<blocks, threads, shared_bytes, static_cast<cudaStream_t>(native_stream)>>>(kernel, grid.groups,
                                                                                               grid.items, args...);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw_cuda_launch_error(work, device, cudaGetErrorString(e));
}

#endif

}  // namespace tessera::detail
