#pragma once
// The CUDA launch of one block: a grid of ExecOptions::block-shaped thread blocks over the
// block's interior; each thread builds its iterators and runs the kernel where they are valid.
// With `in_shared` arguments each thread block first stages its tile and the padding around it
// in dynamic shared memory, synchronises, runs the kernel on BlockIterators over the stage, and
// writes the tile's interior back. With ExecOptions::edge_width (and no staged argument) the
// grid covers only the block's sites within that width of the global domain's faces: a
// boundary kernel over a 4096^2 block launched over every site took 54 us on an H100 to find
// its 16 000 edge sites. With a reduce_into argument each thread keeps its site's contribution
// in a register and the thread block folds them into one partial (a sweep of euler2d that also
// reduced wrote 8 bytes a site to device scratch and read them back: 16 of its 80 bytes a
// site). Only nvcc sees the bodies; a host compiler gets the declaration of the launch, which
// kernel_launch.hpp's cuda_body never lets it call.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/core/box.hpp"
#include "tessera/exec/detail/block_args.hpp"

namespace tessera::detail {

/// The sites of a block of extent `n` at global `origin` that lie within `width` of the global
/// domain's faces (`global`), as at most 2 D boxes in block coordinates that do not overlap: box
/// (d, side) holds the sites outside dimension d's core on that side and inside the core of
/// every dimension before d, so each edge site is in exactly one box.
template <std::size_t D>
struct EdgeBoxes {
  Index<D> lo[2 * D]{};
  Extent<D> size[2 * D]{};
  std::size_t end[2 * D]{};  ///< sites in boxes 0..k
  unsigned count = 0;

  TESSERA_HOST_DEVICE std::size_t volume() const noexcept { return count == 0 ? 0 : end[count - 1]; }

  EdgeBoxes(const Index<D>& origin, const Extent<D>& n, const Extent<D>& global, std::size_t width) {
    const auto w = static_cast<std::int64_t>(width);
    std::int64_t core_lo[D], core_hi[D];
    for (std::size_t d = 0; d < D; ++d) {
      const auto nd = static_cast<std::int64_t>(n.sizes[d]);
      core_lo[d] = std::clamp<std::int64_t>(w - origin.coords[d], 0, nd);
      core_hi[d] =
          std::clamp<std::int64_t>(static_cast<std::int64_t>(global.sizes[d]) - w - origin.coords[d], core_lo[d], nd);
    }
    for (std::size_t d = 0; d < D; ++d)
      for (int side = 0; side < 2; ++side) {
        Index<D> a;
        Extent<D> e;
        for (std::size_t k = 0; k < D; ++k) {
          std::int64_t from = 0, to = static_cast<std::int64_t>(n.sizes[k]);
          if (k < d) from = core_lo[k], to = core_hi[k];
          if (k == d) {
            from = side == 0 ? 0 : core_hi[k];
            to = side == 0 ? core_lo[k] : static_cast<std::int64_t>(n.sizes[k]);
          }
          a.coords[k] = from;
          e.sizes[k] = static_cast<std::size_t>(to > from ? to - from : 0);
        }
        if (e.volume() == 0) continue;
        lo[count] = a;
        size[count] = e;
        end[count] = volume() + e.volume();
        ++count;
      }
  }
};

/// The thread blocks of a launch over a block's interior: their shape and the grid of them.
struct CudaLaunchDims {
  unsigned threads[3] = {1, 1, 1};
  unsigned grid[3] = {1, 1, 1};
  std::size_t thread_blocks() const noexcept { return std::size_t{grid[0]} * grid[1] * grid[2]; }
  std::size_t threads_per_block() const noexcept { return std::size_t{threads[0]} * threads[1] * threads[2]; }
};

/// The launch over `n` of thread blocks shaped `block` (ExecOptions::block). Without a staged
/// tile the thread block need not match that shape (iterators count blocks in it, not in
/// blockDim). Small shapes starve the SMs of resident threads: 64-thread blocks ran SAXPY at 26%
/// achieved occupancy on an H100 (ncu), half of cuBLAS's speed, so x grows until a block has at
/// least 256 threads.
template <bool Shared, std::size_t D>
CudaLaunchDims cuda_launch_dims(const unsigned (&block)[3], const Extent<D>& n) {
  CudaLaunchDims dims;
  for (int d = 0; d < 3; ++d) dims.threads[d] = block[d];
  const unsigned total = block[0] * block[1] * block[2];
  if (!Shared && total < 256) dims.threads[0] = block[0] * ((256 + total - 1) / total);
  for (std::size_t d = 0; d < 3; ++d) {
    const std::size_t extent = d < D ? n.sizes[d < D ? d : 0] : 1;
    dims.grid[d] = static_cast<unsigned>((extent + dims.threads[d] - 1) / dims.threads[d]);
  }
  return dims;
}

/// The dynamic shared memory a launch's reduction folds its threads' contributions in: one R
/// per thread, or none (reduce_into does not combine with in_shared, so no tile shares it).
template <typename R>
std::size_t thread_block_fold_bytes(const CudaLaunchDims& dims) {
  if constexpr (std::is_void_v<R>)
    return 0;
  else
    return (dims.threads_per_block() * sizeof(R) + 127) / 128 * 128;
}

/// Launches the kernel over one block on the cudaStream_t `native_stream` (the caller made the
/// device current); returns CUDA's error text when the launch failed, nullptr when it was queued.
/// `shared_bytes` of dynamic shared memory hold the staged tiles or the reduction's fold
/// (thread_block_fold_bytes). `edges`, when given, is where the kernel runs instead of every
/// site (not with Shared or a reduction).
template <bool Shared, std::size_t D, typename F, typename... A>
const char* launch_block_on_cuda(void* native_stream, const CudaLaunchDims& dims, std::size_t shared_bytes,
                                 const LaunchShape<D>& launch, const Extent<D>& n, const EdgeBoxes<D>* edges,
                                 const F& kernel, const A&... args);

}  // namespace tessera::detail

#if defined(__CUDACC__)

#include <cub/warp/warp_reduce.cuh>
#include <cuda_runtime.h>

namespace tessera::detail {

template <std::size_t D>
__device__ TESSERA_FORCE_INLINE void cuda_tile(const Extent<D>& n, Index<D>& tile_lo, Index<D>& in_tile,
                                               Extent<D>& tile) {
  const unsigned bd[3] = {blockDim.x, blockDim.y, blockDim.z};
  const unsigned bi[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
  const unsigned ti[3] = {threadIdx.x, threadIdx.y, threadIdx.z};
  for (std::size_t d = 0; d < D; ++d) {
    const bool launched = d < 3;
    tile_lo.coords[d] = launched ? static_cast<std::int64_t>(bi[d]) * bd[d] : 0;
    in_tile.coords[d] = launched ? ti[d] : 0;
    const std::int64_t left = static_cast<std::int64_t>(n.sizes[d]) - tile_lo.coords[d];
    const std::int64_t width = launched ? static_cast<std::int64_t>(bd[d]) : left;
    tile.sizes[d] = static_cast<std::size_t>(left < width ? left : width);
  }
}

// A reduction's handle for the thread that runs a site: its own contribution, in a register.
template <typename A, std::size_t D, typename R>
__device__ TESSERA_FORCE_INLINE decltype(auto) thread_site_arg(const A& a, const LaunchShape<D>& launch,
                                                               const Index<D>& local, R&) {
  return site_arg(a, launch, local);
}
template <typename R, typename Reducer, std::size_t D>
__device__ TESSERA_FORCE_INLINE Contribution<R> thread_site_arg(const DeviceReduceArg<R, Reducer>&,
                                                                const LaunchShape<D>&, const Index<D>&, R& mine) {
  return Contribution<R>{&mine};
}

/// Folds the threads' contributions into the thread block's partial, in an order that depends
/// only on the block's size, so that a launch of the same shape folds the same way every time.
/// Whole warps fold by shuffles and one barrier joins their partials; a block that ends in a
/// partial warp folds as a tree in `fold` (one R per thread of dynamic shared memory). The tree
/// alone, eight barriers and shared-memory steps for 256 threads, made the y sweep of euler2d
/// that reduces take 701 us at 4096^2 on an H100 against 547 for the x sweep (ncu).
template <typename R, typename Reducer>
__device__ void fold_thread_block(R mine, R* fold, const DeviceReduceArg<R, Reducer>& a) {
  const unsigned count = blockDim.x * blockDim.y * blockDim.z;
  const unsigned me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  R total;
  if (count % 32 == 0) {
    using WarpReduce = cub::WarpReduce<R>;
    __shared__ typename WarpReduce::TempStorage lanes[32];
    __shared__ R warp_partials[32];
    const unsigned warp = me / 32, lane = me % 32;
    const R folded = WarpReduce(lanes[warp]).Reduce(mine, a.reducer);
    if (lane == 0) warp_partials[warp] = folded;
    __syncthreads();
    if (warp != 0) return;
    const R w = lane < count / 32 ? warp_partials[lane] : Reducer::template identity<R>();
    total = WarpReduce(lanes[0]).Reduce(w, a.reducer);
  } else {
    fold[me] = mine;
    __syncthreads();
    unsigned half = 1;
    while (half * 2 < count) half *= 2;
    for (; half > 0; half /= 2) {
      if (me < half && me + half < count) fold[me] = a.reducer(fold[me], fold[me + half]);
      __syncthreads();
    }
    total = fold[0];
  }
  if (me == 0) a.partials[blockIdx.x + gridDim.x * (blockIdx.y + static_cast<std::size_t>(gridDim.y) * blockIdx.z)] = total;
}

template <std::size_t D, typename F, typename... A>
__global__ void for_each_kernel(LaunchShape<D> launch, Extent<D> n, F kernel, A... args) {
  Index<D> tile_lo, in_tile;
  Extent<D> tile;
  cuda_tile<D>(n, tile_lo, in_tile, tile);
  const Index<D> local = tile_lo + in_tile;
  using R = typename reduced_type<A...>::type;
  if constexpr (std::is_void_v<R>) {
    if (!n.contains(local)) return;
    kernel(site_arg(args, launch, local)...);
  } else {
    // Every thread reaches the fold, those past the block's edge with the identity.
    extern __shared__ __align__(128) unsigned char tessera_stage[];
    R mine = decltype(device_reduce_arg(args...).reducer)::template identity<R>();
    if (n.contains(local)) kernel(thread_site_arg(args, launch, local, mine)...);
    fold_thread_block(mine, reinterpret_cast<R*>(tessera_stage), device_reduce_arg(args...));
  }
}

template <std::size_t D, typename F, typename... A>
__global__ void for_each_edges_kernel(LaunchShape<D> launch, EdgeBoxes<D> edges, F kernel, A... args) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= edges.volume()) return;
  unsigned k = 0;
  while (i >= edges.end[k]) ++k;
  const Index<D> local = edges.size[k].delinear(i - (k == 0 ? 0 : edges.end[k - 1])) + edges.lo[k];
  kernel(site_arg(args, launch, local)...);
}

/// Copies a staged argument's tile between global and shared memory; threads of the block
/// stride over its sites. Other arguments do nothing.
template <typename A, std::size_t D>
__device__ TESSERA_FORCE_INLINE void stage_copy(const A&, std::byte*, const Index<D>&, const Extent<D>&, bool) {}
template <typename T, std::size_t D, Layout L, Access A>
__device__ void stage_copy(const SharedBlockArg<T, D, L, A>& a, std::byte* shared_base, const Index<D>& tile_lo,
                           const Extent<D>& tile, bool back) {
  if (A == Access::read && back) return;  // in_shared(read_only(t)): nothing to give back
  BlockView<T, D, L> global{a.data, a.geometry};
  BlockView<T, D, L> shared{shared_base + a.stage_offset, a.stage};
  const Box<D> box = back ? Box<D>(tile) : Box<D>(tile).grown(a.geometry.padding);
  const Extent<D> e = box.extent();
  const std::size_t count = e.volume();
  const std::size_t threads = static_cast<std::size_t>(blockDim.x) * blockDim.y * blockDim.z;
  const std::size_t me = threadIdx.x + blockDim.x * (threadIdx.y + static_cast<std::size_t>(blockDim.y) * threadIdx.z);
  for (std::size_t i = me; i < count; i += threads) {
    const Index<D> p = e.delinear(i) + box.lo;
    if (back)
      global.at(p + tile_lo) = shared.at(p);
    else
      shared.at(p) = global.at(p + tile_lo);
  }
}

template <typename A, std::size_t D>
__device__ TESSERA_FORCE_INLINE decltype(auto) shared_site_arg(const A& a, std::byte*, const LaunchShape<D>& launch,
                                                               const Index<D>&, const Index<D>& local) {
  return site_arg(a, launch, local);
}
template <typename T, std::size_t D, Layout L, Access A>
__device__ TESSERA_FORCE_INLINE BlockIterator<T, D, L, Extent<D>, A> shared_site_arg(
    const SharedBlockArg<T, D, L, A>& a, std::byte* shared_base, const LaunchShape<D>&, const Index<D>& in_tile,
    const Index<D>&) {
  return BlockIterator<T, D, L, Extent<D>, A>(shared_base + a.stage_offset, a.stage, in_tile);
}

template <std::size_t D, typename F, typename... A>
__global__ void for_each_shared_kernel(LaunchShape<D> launch, Extent<D> n, F kernel, A... args) {
  extern __shared__ __align__(128) unsigned char tessera_stage[];
  std::byte* stage = reinterpret_cast<std::byte*>(tessera_stage);
  Index<D> tile_lo, in_tile;
  Extent<D> tile;
  cuda_tile<D>(n, tile_lo, in_tile, tile);
  (stage_copy(args, stage, tile_lo, tile, false), ...);
  __syncthreads();
  const Index<D> local = tile_lo + in_tile;
  if (n.contains(local)) kernel(shared_site_arg(args, stage, launch, in_tile, local)...);
  __syncthreads();
  (stage_copy(args, stage, tile_lo, tile, true), ...);
}

template <bool Shared, std::size_t D, typename F, typename... A>
const char* launch_block_on_cuda(void* native_stream, const CudaLaunchDims& dims, std::size_t shared_bytes,
                                 const LaunchShape<D>& launch, const Extent<D>& n, const EdgeBoxes<D>* edges,
                                 const F& kernel, const A&... args) {
  const auto stream = static_cast<cudaStream_t>(native_stream);
  if constexpr (!Shared && std::is_void_v<typename reduced_type<A...>::type>) {
    if (edges != nullptr) {
      const std::size_t sites = edges->volume();
      if (sites == 0) return nullptr;  // the block touches no face of the domain
      constexpr unsigned threads = 256;
      const auto grid = static_cast<unsigned>((sites + threads - 1) / threads);
      for_each_edges_kernel<D, F, A...><<<grid, threads, 0, stream>>>(launch, *edges, kernel, args...);
      const cudaError_t launched = cudaGetLastError();
      return launched == cudaSuccess ? nullptr : cudaGetErrorString(launched);
    }
  }
  const dim3 threads(dims.threads[0], dims.threads[1], dims.threads[2]);
  const dim3 grid(dims.grid[0], dims.grid[1], dims.grid[2]);
  if constexpr (Shared)
    for_each_shared_kernel<D, F, A...><<<grid, threads, shared_bytes, stream>>>(launch, n, kernel, args...);
  else
    for_each_kernel<D, F, A...><<<grid, threads, shared_bytes, stream>>>(launch, n, kernel, args...);
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? nullptr : cudaGetErrorString(launched);
}

}  // namespace tessera::detail

#endif
