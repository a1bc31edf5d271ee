#pragma once
// The CUDA reduction of one block: each thread block folds its sites with CUB's BlockReduce and
// writes one partial; the partials are copied to the host in stream order and folded there into
// the block's slot. Only nvcc sees the bodies; a host compiler gets the declaration of the
// launch, which kernel_launch.hpp's cuda_body never lets it call.

#include <cstddef>
#include <memory>
#include <vector>

#include "tessera/device/device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/exec/detail/block_args.hpp"

namespace tessera::detail {

/// Enqueues the reduction of one block on `stream` of `device` (current on this thread); `*slot`
/// holds the result once the stream has passed it.
template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
void reduce_block_on_cuda(Device& device, Stream& stream, const BA& arg, const LaunchShape<D>& launch,
                          const Extent<D>& n, const Reducer& reducer, const Map& map, R* slot);

}  // namespace tessera::detail

#if defined(__CUDACC__)

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

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

template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
void reduce_block_on_cuda(Device& device, Stream& stream, const BA& arg, const LaunchShape<D>& launch,
                          const Extent<D>& n, const Reducer& reducer, const Map& map, R* slot) {
  const std::size_t volume = n.volume();
  const unsigned grid = static_cast<unsigned>(
      std::min<std::size_t>(1024, (volume + reduce_threads - 1) / reduce_threads == 0 ? 1 : (volume + reduce_threads - 1) / reduce_threads));
  auto cuda_stream = static_cast<cudaStream_t>(stream.native_handle());
  R* partials = static_cast<R*>(device.allocate(grid * sizeof(R)));
  auto host = std::make_shared<std::vector<R>>(grid);
  reduce_kernel<R, D><<<grid, reduce_threads, 0, cuda_stream>>>(arg, launch, n, reducer, map, partials);
  cudaMemcpyAsync(host->data(), partials, grid * sizeof(R), cudaMemcpyDeviceToHost, cuda_stream);
  Device* dev = &device;
  stream.enqueue_host([host, slot, reducer, partials, dev] {
    R acc = Reducer::template identity<R>();
    for (const R& p : *host) acc = reducer(acc, p);
    *slot = acc;
    dev->deallocate(partials, host->size() * sizeof(R));
  }, "reduce partials");
}

}  // namespace tessera::detail

#endif
