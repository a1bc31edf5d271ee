#pragma once
// The CUDA reduction of one block: each thread block folds its sites with CUB's BlockReduce and
// writes one partial, one more thread block folds the partials, and the block's total is copied
// into its slot in stream order. A slot in pinned memory (the Graph's reduce nodes keep theirs
// there) takes the copy directly, so nothing runs on the host between the reduction and what
// follows it; a slot in device memory (a tensor's site) is written by the fold itself; any other
// slot gets it through a host function. Device scratch is freed through Stream::retain, so a
// captured reduction keeps it for every replay. Only nvcc sees the bodies; a host compiler gets
// the declaration of the launch, which kernel_launch.hpp's cuda_body never lets it call.

#include <cstddef>
#include <memory>
#include <vector>

#include "tessera/device/device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/site_reduction.hpp"

namespace tessera::detail {

/// Enqueues the reduction of one block on `stream` of `device` (current on this thread); `*slot`
/// holds the result once the stream has passed it.
template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
void reduce_block_on_cuda(Device& device, Stream& stream, const BA& arg, const LaunchShape<D>& launch,
                          const Extent<D>& n, const Reducer& reducer, const Map& map, R* slot);

/// Enqueues on `native_stream` (a cudaStream_t of the current device) one thread that folds
/// `count` partials in order, from the reducer's identity, into `*total`: the bits of the same
/// fold on the host. The partials are pinned host memory (device-readable) or device memory.
/// Returns null, or the CUDA error of the launch.
template <typename R, typename Reducer>
const char* combine_in_order_on_cuda(void* native_stream, const R* partials, std::size_t count, const Reducer& reducer,
                                     R* total);

}  // namespace tessera::detail

#if defined(__CUDACC__)

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>

namespace tessera::detail {

inline constexpr unsigned reduce_threads = 256;

template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
__global__ void reduce_kernel(BA arg, LaunchShape<D> launch, Extent<D> n, Reducer reducer, Map map, R* partials) {
  using BlockReduce = cub::BlockReduce<R, reduce_threads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const std::size_t volume = n.volume();
  R acc = Reducer::template identity<R>();
  // A grid-stride loop over the block's sites, x fastest, so neighbouring threads read
  // neighbouring sites.
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * reduce_threads + threadIdx.x; i < volume;
       i += static_cast<std::size_t>(gridDim.x) * reduce_threads) {
    acc = reducer(acc, static_cast<R>(map(site_arg(arg, launch, n.delinear(i)))));
  }
  const R block = BlockReduce(temp).Reduce(acc, reducer);
  if (threadIdx.x == 0) partials[blockIdx.x] = block;
}

/// One thread block folds `count` partials into `*total`.
template <typename R, typename Reducer>
__global__ void fold_partials_kernel(const R* partials, unsigned count, Reducer reducer, R* total) {
  using BlockReduce = cub::BlockReduce<R, reduce_threads>;
  __shared__ typename BlockReduce::TempStorage temp;
  R acc = Reducer::template identity<R>();
  for (unsigned i = threadIdx.x; i < count; i += reduce_threads) acc = reducer(acc, partials[i]);
  const R block = BlockReduce(temp).Reduce(acc, reducer);
  if (threadIdx.x == 0) *total = block;
}

template <typename R, typename Reducer>
__global__ void combine_in_order_kernel(const R* partials, std::size_t count, Reducer reducer, R* total) {
  *total = fold_in_order(partials, count, reducer);
}

template <typename R, typename Reducer>
const char* combine_in_order_on_cuda(void* native_stream, const R* partials, std::size_t count, const Reducer& reducer,
                                     R* total) {
  combine_in_order_kernel<R><<<1, 1, 0, static_cast<cudaStream_t>(native_stream)>>>(partials, count, reducer, total);
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? nullptr : cudaGetErrorString(launched);
}

template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
void reduce_block_on_cuda(Device& device, Stream& stream, const BA& arg, const LaunchShape<D>& launch,
                          const Extent<D>& n, const Reducer& reducer, const Map& map, R* slot) {
  const std::size_t volume = n.volume();
  const std::size_t blocks = (volume + reduce_threads - 1) / reduce_threads;
  const auto grid = static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, 1024));
  auto cuda_stream = static_cast<cudaStream_t>(stream.native_handle());
  // The grid's partials, then the block's total.
  const std::size_t bytes = (grid + 1) * sizeof(R);
  R* scratch = static_cast<R*>(device.allocate(bytes));
  Device* dev = &device;
  cudaPointerAttributes where{};
  const bool known = cudaPointerGetAttributes(&where, slot) == cudaSuccess;
  if (!known) cudaGetLastError();  // an unregistered pointer is an answer, not an error to keep
  const bool pinned = known && where.type == cudaMemoryTypeHost;
  // A slot in device memory (reduce_into a tensor of one site) takes the total from the fold.
  const bool on_device = known && where.type == cudaMemoryTypeDevice;
  reduce_kernel<R, D><<<grid, reduce_threads, 0, cuda_stream>>>(arg, launch, n, reducer, map, scratch);
  fold_partials_kernel<R>
      <<<1, reduce_threads, 0, cuda_stream>>>(scratch, grid, reducer, on_device ? slot : scratch + grid);
  if (pinned) {
    cudaMemcpyAsync(slot, scratch + grid, sizeof(R), cudaMemcpyDeviceToHost, cuda_stream);
  } else if (!on_device) {
    // A pinned cell, so the copy does not hold this thread until the kernels are done.
    R* cell = static_cast<R*>(device.try_allocate_pinned_host(sizeof(R)));
    std::shared_ptr<R> landing =
        cell != nullptr ? std::shared_ptr<R>(cell, [dev](R* p) { dev->deallocate_pinned_host(p, sizeof(R)); })
                        : std::make_shared<R>();
    cudaMemcpyAsync(landing.get(), scratch + grid, sizeof(R), cudaMemcpyDeviceToHost, cuda_stream);
    stream.enqueue_host([slot, from = landing.get()] { *slot = *from; }, "reduce total");
    stream.retain(std::move(landing));
  }
  stream.retain(std::shared_ptr<const void>(
      scratch, [dev, bytes](const void* p) { dev->deallocate(const_cast<void*>(p), bytes); }));
}

}  // namespace tessera::detail

#endif
