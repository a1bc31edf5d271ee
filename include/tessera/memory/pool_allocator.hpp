#pragma once
// tessera::PoolAllocator: a thread-safe allocator over one region reserved at start-up (a whole
// device's memory from cudaMalloc, a pinned host block from cudaHostAlloc, a simulated device's
// arena), so no allocation during a run ever calls the device library (PREMA §4.1.1–4.1.2).

#include <cstddef>
#include <memory>
#include <string>

namespace tessera {

struct PoolOptions {
  /// Requests up to this size (a power of two, 256 B to 1 GiB) are served from size classes
  /// 256 B, 512 B, ..., largest_class; larger ones best-fit from the free ranges.
  std::size_t largest_class = std::size_t{1} << 20;
  /// A size class takes memory from the region a slab at a time: at most 64 blocks, slab_bytes
  /// and half a thread cache, at least one block. A power of two, 16 KiB or more.
  std::size_t slab_bytes = std::size_t{1} << 20;
  /// Each thread keeps up to this many bytes (and 128 blocks) of freed blocks per size class to
  /// reuse without locks. Memory in another thread's cache is not available until that thread
  /// exits or calls trim(), so small pools shared by many threads may want less; 0 turns the
  /// caches off.
  std::size_t thread_cache_bytes = std::size_t{1} << 20;
};

/// Carves 256-byte-aligned blocks out of `[base, base + capacity)`.
///
/// Never touches the region: all bookkeeping lives in host memory owned by the pool (8 B per
/// 16 KiB of region, plus 256 B per slab in use), so the region may be device memory the host
/// cannot dereference. The caller owns the region and keeps it alive longer than the pool.
///
/// Thread safe: any thread may allocate and deallocate concurrently. Each thread keeps a small
/// cache of the blocks it freed (PoolOptions::thread_cache_bytes) and allocates from it without
/// locks; the slabs behind the caches have a lock per size class, and large requests share one
/// lock over the free-range map. A double free or a stray pointer is caught whichever thread
/// frees it, because each block's "with a user" flag is cleared by one atomic exchange.
///
/// Small requests round up to a power-of-two size class; large ones (above
/// PoolOptions::largest_class) round up to a multiple of 256 B and are taken best-fit from the
/// free ranges, which coalesce with their neighbours when freed. Size classes get their memory
/// from those same free ranges, a slab at a time, so small and large requests share the region;
/// trim() gives fully free slabs back.
///
///   void* region = nullptr;
///   cudaMalloc(&region, 60ull << 30);  // once, at start-up
///   tessera::PoolAllocator pool(region, 60ull << 30, "cuda:0");
///   void* a = pool.allocate(4096);
///   pool.deallocate(a, 4096);
class PoolAllocator {
 public:
  /// Every pointer the pool returns is a multiple of this (what cudaMalloc guarantees).
  static constexpr std::size_t alignment = 256;

  /// Bytes skipped at the start of `base` to reach 256-byte alignment, and the tail below a
  /// multiple of 256, are never handed out; capacity() says what is left. Throws tessera::Error
  /// for a null base, a region smaller than 256 bytes after alignment, or bad options.
  ///
  ///   std::vector<std::byte> host(64 << 20);
  ///   tessera::PoolAllocator pool(host.data(), host.size(), "sim:0", {.largest_class = 64 << 10});
  PoolAllocator(void* base, std::size_t capacity, std::string name, PoolOptions options = {});
  /// Logs a warning if blocks are still allocated; the region itself is the caller's to free.
  ~PoolAllocator();

  PoolAllocator(const PoolAllocator&) = delete;
  PoolAllocator& operator=(const PoolAllocator&) = delete;

  /// A block of at least `bytes` (zero gives a distinct 256-byte block, like malloc(0)).
  /// Throws tessera::Error naming the pool, the request, the bytes in use, the capacity and the
  /// largest free range when nothing fits, after trim() could not make room.
  ///
  ///   auto* rows = static_cast<float*>(pool.allocate(n * sizeof(float)));
  void* allocate(std::size_t bytes);

  /// As allocate(), but nullptr when nothing fits: the memory layer then evicts and retries.
  ///
  ///   void* p = pool.try_allocate(bytes);
  ///   while (!p && cache.evict_one()) p = pool.try_allocate(bytes);
  void* try_allocate(std::size_t bytes);

  /// Gives back a block; `bytes` is the size that was passed to allocate. A null pointer is
  /// ignored. A pointer outside the region, one not returned by this pool, a wrong size or a
  /// second free of the same block throws tessera::Error and leaves the pool unchanged.
  ///
  ///   void* p = pool.allocate(1000);
  ///   pool.deallocate(p, 1000);
  void deallocate(void* p, std::size_t bytes);

  /// Empties the calling thread's cache, then returns size-class slabs with no live block to the
  /// free ranges, so large requests can use them. allocate() calls it before giving up. Other
  /// threads' caches are emptied when those threads exit (or call trim() themselves).
  ///
  ///   pool.trim();
  ///   std::size_t biggest = pool.largest_free_range();
  void trim();

  /// What a request of `bytes` really takes from the pool (its size class, or a multiple of 256).
  ///
  ///   pool.block_bytes(1000);  // 1024
  std::size_t block_bytes(std::size_t bytes) const noexcept;
  /// The sum of block_bytes() over live allocations; exact when no other thread is allocating.
  std::size_t bytes_in_use() const;
  /// Bytes the pool manages: the region less its alignment slack.
  std::size_t capacity() const noexcept;
  /// The largest contiguous free range: the biggest large request that fits now. Free blocks
  /// inside size-class slabs count only after trim() has returned their slabs.
  std::size_t largest_free_range() const;
  const std::string& name() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
