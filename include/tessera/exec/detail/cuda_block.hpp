#pragma once
// The CUDA launch of one block: a grid of ExecOptions::block-shaped thread blocks over the
// block's interior; each thread builds its iterators and runs the kernel where they are valid.
// With `in_shared` arguments each thread block first stages its tile and the padding around it
// in dynamic shared memory, synchronises, runs the kernel on BlockIterators over the stage, and
// writes the tile's interior back. With ExecOptions::edge_width (and no staged argument) the
// grid covers only the block's sites within that width of the global domain's faces: a
// boundary kernel over a 4096^2 block launched over every site took 54 us on an H100 to find
// its 16 000 edge sites. Only nvcc sees the bodies; a host compiler gets the declaration of the
// launch, which kernel_launch.hpp's cuda_body never lets it call.

#include <algorithm>
#include <cstddef>
#include <cstdint>

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

/// Launches the kernel over one block on the cudaStream_t `native_stream` (the caller made the
/// device current); returns CUDA's error text when the launch failed, nullptr when it was queued.
/// `edges`, when given, is where the kernel runs instead of every site (not with Shared).
template <bool Shared, std::size_t D, typename F, typename... A>
const char* launch_block_on_cuda(void* native_stream, const unsigned (&block)[3], std::size_t shared_bytes,
                                 const LaunchShape<D>& launch, const Extent<D>& n, const EdgeBoxes<D>* edges,
                                 const F& kernel, const A&... args);

}  // namespace tessera::detail

#if defined(__CUDACC__)

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

template <std::size_t D, typename F, typename... A>
__global__ void for_each_kernel(LaunchShape<D> launch, Extent<D> n, F kernel, A... args) {
  Index<D> tile_lo, in_tile;
  Extent<D> tile;
  cuda_tile<D>(n, tile_lo, in_tile, tile);
  const Index<D> local = tile_lo + in_tile;
  if (!n.contains(local)) return;
  kernel(site_arg(args, launch, local)...);
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
const char* launch_block_on_cuda(void* native_stream, const unsigned (&block)[3], std::size_t shared_bytes,
                                 const LaunchShape<D>& launch, const Extent<D>& n, const EdgeBoxes<D>* edges,
                                 const F& kernel, const A&... args) {
  const auto stream = static_cast<cudaStream_t>(native_stream);
  if constexpr (!Shared) {
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
  dim3 threads(block[0], block[1], block[2]);
  if constexpr (!Shared) {
    // Without a staged tile the thread block need not match ExecOptions::block (iterators count
    // blocks in that shape, not in blockDim). Small shapes starve the SMs of resident threads:
    // 64-thread blocks ran SAXPY at 26% achieved occupancy on an H100 (ncu), half of cuBLAS's
    // speed, so x grows until a block has at least 256 threads.
    const unsigned total = block[0] * block[1] * block[2];
    if (total < 256) threads.x = block[0] * ((256 + total - 1) / total);
  }
  dim3 grid(1, 1, 1);
  const std::size_t ext[3] = {n.sizes[0], D > 1 ? n.sizes[D > 1 ? 1 : 0] : 1, D > 2 ? n.sizes[D > 2 ? 2 : 0] : 1};
  grid.x = static_cast<unsigned>((ext[0] + threads.x - 1) / threads.x);
  grid.y = static_cast<unsigned>((ext[1] + threads.y - 1) / threads.y);
  grid.z = static_cast<unsigned>((ext[2] + threads.z - 1) / threads.z);
  if constexpr (Shared) {
    for_each_shared_kernel<D, F, A...><<<grid, threads, shared_bytes, stream>>>(launch, n, kernel, args...);
  } else {
    for_each_kernel<D, F, A...><<<grid, threads, 0, stream>>>(launch, n, kernel, args...);
  }
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? nullptr : cudaGetErrorString(launched);
}

}  // namespace tessera::detail

#endif
