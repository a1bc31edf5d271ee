// PoolAllocator: size classes over slabs, per-thread caches of freed blocks in front of them,
// and a best-fit map of free ranges that the slabs and the large requests share. All state is
// host-side metadata; the region is only address arithmetic.
//
// A small block is in exactly one place: available in its slab (class lock), in one thread's
// cache (that thread only), or with a user (its byte in the slab's `live` array is 1). Freeing
// exchanges that byte for 0, so a double free or a stray pointer is caught whichever thread
// frees, without the caches having to agree on anything.
#include "tessera/memory/pool_allocator.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/memory/bytes.hpp"

namespace tessera {
namespace {

constexpr std::size_t kAlignment = PoolAllocator::alignment;
constexpr unsigned kAlignmentShift = 8;
constexpr std::size_t kMaxLargestClass = std::size_t{1} << 30;
constexpr std::size_t kMaxBlocksPerSlab = 64;  // one 64-bit mask per slab
// Slabs start on a granule boundary and no two slabs share a granule, so one table entry per
// granule finds a block's slab in O(1). 16 KiB = the smallest slab (64 x 256 B).
constexpr unsigned kGranuleShift = 14;
constexpr std::size_t kGranule = std::size_t{1} << kGranuleShift;
// A granule's owner entry: (slab id + 1) << 32 | (granules since the slab's first) << 8 | class;
// 0 means no slab. A slab spans at most 1 GiB = 65536 granules, so the distance takes 16 bits.
constexpr std::uint64_t kClassMask = 0x1f;
constexpr unsigned kDistanceShift = 8;
constexpr std::uint64_t kDistanceMask = 0xffff;
constexpr std::size_t kMaxGranules = std::numeric_limits<std::uint32_t>::max() - 1;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::size_t kSlabsPerChunk = 1024;
constexpr std::uint32_t kShared = 0;  ///< the taker of slabs no thread cache prefers
// Thread caches: at most 128 blocks and PoolOptions::thread_cache_bytes per class; classes
// whose cache would hold fewer than 2 blocks go straight to their slabs.
constexpr std::size_t kMaxCachedBlocks = 128;
constexpr unsigned kMaxCachedClasses = 13;  // 256 B .. 1 MiB

constexpr std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) & ~(a - 1); }
constexpr bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }
constexpr std::size_t cache_capacity(unsigned c, std::size_t cache_bytes) {
  if (c >= kMaxCachedClasses) return 0;
  const std::size_t blocks = std::min(kMaxCachedBlocks, cache_bytes >> (kAlignmentShift + c));
  return blocks >= 2 ? blocks : 0;
}

std::string address(std::uintptr_t a) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%jx", static_cast<std::uintmax_t>(a));
  return text;
}

// alignas(256): neighbouring slabs are often used by different threads, and at 128 B apart the
// hardware prefetchers still dragged their lines between cores (2 threads: 35 ns per
// allocate+free pair at 128, 22 ns at 256, 19 ns on 1 thread).
struct alignas(256) Slab {
  // Byte i: block i is with a user. The only part touched without the class lock. Bytes, not
  // bits, so allocating is a plain store (the block is this thread's alone) and only freeing
  // needs an atomic exchange.
  std::atomic<std::uint8_t> live[kMaxBlocksPerSlab] = {};
  // Under the class mutex:
  std::size_t offset = 0;  ///< from the pool's aligned start
  std::size_t bytes = 0;
  std::uint64_t all = 0;        ///< one bit per block
  std::uint64_t available = 0;  ///< blocks neither with a user nor in a thread cache
  std::uint32_t id = 0;
  std::uint32_t taker = kShared;  ///< whose list holds the slab (see SizeClass::partial)
  std::uint32_t prev = kNone;
  std::uint32_t next = kNone;
};

struct CachedBlock {
  Slab* slab;
  std::uint64_t offset : 56;
  std::uint64_t index : 8;  ///< in its slab
};

struct alignas(64) SizeClass {
  // Read by every allocate and deallocate, so away from the lock's cache line.
  std::size_t block = 0;
  unsigned block_shift = 0;  ///< block == 1 << block_shift: shifts, not divisions, on the fast path
  std::size_t slab_bytes = 0;
  std::size_t cache_capacity = 0;
  // Slabs live in fixed chunks that never move, because deallocate reads them without the lock;
  // `chunks` is sized for the most slabs the region can hold, and published entry by entry.
  std::unique_ptr<std::atomic<Slab*>[]> chunks;

  alignas(64) std::mutex mutex;  // guards the rest
  std::vector<std::unique_ptr<Slab[]>> chunk_storage;
  std::uint32_t slab_count = 0;
  std::vector<std::uint32_t> unused_ids;
  // Slabs with an available block, listed by the thread cache that last took blocks from them
  // (index kShared: fully available slabs, and those of exited threads). A refill prefers its
  // own list, so a slab's blocks stay with one thread and its live bytes are not bounced between
  // cores; blocks return to their slab and so to the list of the thread that took them.
  std::vector<std::uint32_t> partial{kNone};
  // Bytes of blocks out of their slabs (with users or in caches). Written under `mutex`.
  std::atomic<std::size_t> out_bytes{0};
  std::atomic<std::size_t> slab_total{0};

  Slab* slab(std::uint32_t id) const {
    Slab* chunk = chunks[id / kSlabsPerChunk].load(std::memory_order_acquire);
    return chunk ? chunk + id % kSlabsPerChunk : nullptr;
  }
  std::uint32_t& head(std::uint32_t taker) {
    if (taker >= partial.size()) partial.resize(taker + 1, kNone);
    return partial[taker];
  }
  void link(Slab& s, std::uint32_t taker) {
    std::uint32_t& first = head(taker);
    s.taker = taker;
    s.prev = kNone;
    s.next = first;
    if (first != kNone) slab(first)->prev = s.id;
    first = s.id;
  }
  void unlink(Slab& s) {
    if (s.prev != kNone)
      slab(s.prev)->next = s.next;
    else
      head(s.taker) = s.next;
    if (s.next != kNone) slab(s.next)->prev = s.prev;
    s.prev = s.next = kNone;
  }
  /// A slab to take blocks from for `taker`: its own, a shared one, or (when the region is
  /// full) another thread's.
  Slab* slab_for(std::uint32_t taker) {
    std::uint32_t id = head(taker) != kNone ? head(taker) : partial[kShared];
    for (std::size_t t = 0; id == kNone && t < partial.size(); ++t) id = partial[t];
    return id == kNone ? nullptr : slab(id);
  }
  void add_out_bytes(std::ptrdiff_t delta) {
    out_bytes.store(out_bytes.load(std::memory_order_relaxed) + static_cast<std::size_t>(delta),
                    std::memory_order_relaxed);
  }
};

struct PoolCore;

/// One thread's freed small blocks for one pool. Only that thread touches the blocks; the
/// pool's destructor may clear `pool` (under exit_mutex) while the thread still lives.
struct ThreadCache {
  ThreadCache(PoolCore* p, std::uint32_t i) : pool(p), index(i) {}
  std::mutex exit_mutex;
  PoolCore* pool;
  /// This cache's slab list in each SizeClass, from 1.
  const std::uint32_t index;
  /// Written by the owning thread only; read by bytes_in_use() on any thread.
  alignas(64) std::atomic<std::size_t> cached_bytes{0};
  std::uint32_t count[kMaxCachedClasses] = {};
  CachedBlock blocks[kMaxCachedClasses][kMaxCachedBlocks];

  void add_cached_bytes(std::ptrdiff_t delta) {
    cached_bytes.store(cached_bytes.load(std::memory_order_relaxed) + static_cast<std::size_t>(delta),
                       std::memory_order_relaxed);
  }
};

void flush_on_thread_exit(ThreadCache& cache);

// The cache of the pool this thread used last: a trivial thread_local, so the fast path pays no
// guard for a destructor, and initial-exec, so no __tls_get_addr call (16 bytes fit the static
// TLS that glibc keeps spare even if libtessera is dlopen'ed). A pool is known by a number never
// reused, so a destroyed pool's is never matched.
struct LastUsed {
  std::uint64_t pool_uid = 0;
  ThreadCache* cache = nullptr;
};
[[gnu::tls_model("initial-exec")]] thread_local LastUsed last_used;

/// Owns each thread's caches, one per pool it used, and empties them when the thread exits.
struct ThreadCaches {
  std::vector<std::pair<std::uint64_t, std::shared_ptr<ThreadCache>>> all;
  ~ThreadCaches() {
    last_used = {};
    for (auto& entry : all) flush_on_thread_exit(*entry.second);
  }
  /// Drops the caches of pools destroyed since (their blocks went with the pool).
  void forget_dead_pools() {
    std::erase_if(all, [](const auto& entry) {
      std::lock_guard lock(entry.second->exit_mutex);
      return entry.second->pool == nullptr;
    });
  }
};
thread_local ThreadCaches this_thread_caches;
std::atomic<std::uint64_t> next_pool_uid{1};

struct PoolCore {
  std::string name;
  PoolOptions options;
  std::uint64_t uid = next_pool_uid.fetch_add(1);
  std::uintptr_t start = 0;  ///< the region's first 256-aligned address
  std::size_t capacity = 0;
  unsigned class_count = 0;
  std::unique_ptr<SizeClass[]> classes;
  // Atomic because deallocate reads it without locks; an entry naming class c only changes
  // under c's lock, while none of its slab's blocks is out.
  std::unique_ptr<std::atomic<std::uint64_t>[]> granule_owner;

  // Lock order: a class's mutex, then ranges_mutex.
  alignas(64) mutable std::mutex ranges_mutex;
  std::map<std::size_t, std::size_t> free_by_offset;           ///< offset -> length
  std::set<std::pair<std::size_t, std::size_t>> free_by_size;  ///< (length, offset), for best fit
  std::unordered_map<std::size_t, std::size_t> large_live;     ///< offset -> rounded bytes
  std::atomic<std::size_t> large_bytes{0};

  // Lock order: a cache's exit_mutex before a class's mutex or caches_mutex.
  alignas(64) mutable std::mutex caches_mutex;
  std::vector<std::shared_ptr<ThreadCache>> caches;

  static unsigned class_of(std::size_t bytes) {
    return bytes <= kAlignment ? 0 : static_cast<unsigned>(std::bit_width(bytes - 1)) - kAlignmentShift;
  }
  bool is_small(std::size_t bytes) const { return bytes <= options.largest_class; }
  void* pointer(std::size_t offset) const { return reinterpret_cast<void*>(start + offset); }

  // --- the free-range map (ranges_mutex held) ---

  void add_range(std::size_t offset, std::size_t length) {
    free_by_offset.emplace(offset, length);
    free_by_size.emplace(length, offset);
  }
  void remove_range(std::map<std::size_t, std::size_t>::iterator it) {
    free_by_size.erase({it->second, it->first});
    free_by_offset.erase(it);
  }

  /// Best fit: the shortest free range that holds `bytes` at an `align`-aligned offset.
  std::optional<std::size_t> take_range(std::size_t bytes, std::size_t align) {
    for (auto it = free_by_size.lower_bound({bytes, 0}); it != free_by_size.end(); ++it) {
      const auto [length, offset] = *it;
      const std::size_t at = align_up(offset, align);
      if (at + bytes > offset + length) continue;  // only when align > 256: try a longer range
      remove_range(free_by_offset.find(offset));
      // The range was maximal, so what is left of it borders nothing free: no coalescing.
      if (at > offset) add_range(offset, at - offset);
      if (at + bytes < offset + length) add_range(at + bytes, offset + length - at - bytes);
      return at;
    }
    return std::nullopt;
  }

  void give_back_range(std::size_t offset, std::size_t length) {
    auto next = free_by_offset.lower_bound(offset);
    if (next != free_by_offset.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        length += prev->second;
        remove_range(prev);
      }
    }
    if (next != free_by_offset.end() && offset + length == next->first) {
      length += next->second;
      remove_range(next);
    }
    add_range(offset, length);
  }

  // --- slabs (the class mutex held) ---

  void set_owner(const Slab& s, unsigned c, bool owned) {
    const std::size_t first = s.offset >> kGranuleShift;
    for (std::size_t g = first; g <= (s.offset + s.bytes - 1) >> kGranuleShift; ++g)
      granule_owner[g].store(owned ? ((std::uint64_t{s.id} + 1) << 32) | ((g - first) << kDistanceShift) | c : 0,
                             std::memory_order_relaxed);
  }

  /// A new slab for class `c` on `taker`'s list; near exhaustion a smaller one, down to one block.
  bool add_slab(unsigned c, std::uint32_t taker) {
    SizeClass& sc = classes[c];
    std::optional<std::size_t> offset;
    std::size_t bytes = sc.slab_bytes;
    {
      std::lock_guard lock(ranges_mutex);
      while (!(offset = take_range(bytes, kGranule)) && bytes > sc.block) bytes /= 2;
    }
    if (!offset) return false;
    std::uint32_t id;
    if (!sc.unused_ids.empty()) {
      id = sc.unused_ids.back();
      sc.unused_ids.pop_back();
    } else {
      id = sc.slab_count++;  // < kMaxGranules: every slab has a granule of its own
      if (id % kSlabsPerChunk == 0) {
        sc.chunk_storage.push_back(std::make_unique<Slab[]>(kSlabsPerChunk));
        sc.chunks[id / kSlabsPerChunk].store(sc.chunk_storage.back().get(), std::memory_order_release);
      }
    }
    const std::size_t blocks = bytes >> sc.block_shift;
    Slab& s = *sc.slab(id);
    s.offset = *offset;
    s.bytes = bytes;
    s.all = s.available = blocks == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << blocks) - 1;
    s.id = id;
    set_owner(s, c, true);
    sc.link(s, taker);
    sc.slab_total.store(sc.slab_total.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    return true;
  }

  /// Moves up to `n` available blocks of class `c` to `out` for `taker`; returns how many.
  std::size_t take_blocks(unsigned c, std::uint32_t taker, CachedBlock* out, std::size_t n) {
    SizeClass& sc = classes[c];
    std::lock_guard lock(sc.mutex);
    std::size_t taken = 0;
    while (taken < n) {
      if (sc.head(taker) == kNone && sc.partial[kShared] == kNone) add_slab(c, taker);  // before stealing
      Slab* s = sc.slab_for(taker);
      if (s == nullptr) break;
      for (; taken < n && s->available != 0; ++taken) {
        const auto index = static_cast<std::size_t>(std::countr_zero(s->available));
        s->available &= s->available - 1;
        out[taken] = {s, s->offset + (index << sc.block_shift), index};
      }
      sc.unlink(*s);
      if (s->available != 0)
        sc.link(*s, taker);
      else
        s->taker = taker;  // where its blocks go back to
    }
    sc.add_out_bytes(static_cast<std::ptrdiff_t>(taken * sc.block));
    return taken;
  }

  /// Makes blocks of class `c` available in their slabs again.
  void return_blocks(unsigned c, const CachedBlock* blocks, std::size_t n) {
    SizeClass& sc = classes[c];
    std::lock_guard lock(sc.mutex);
    for (std::size_t i = 0; i < n; ++i) {
      Slab& s = *blocks[i].slab;
      const bool was_drained = s.available == 0;
      s.available |= std::uint64_t{1} << blocks[i].index;
      if (s.available == s.all) {  // whole again: anyone's, or trim's
        if (!was_drained) sc.unlink(s);
        sc.link(s, kShared);
      } else if (was_drained) {
        sc.link(s, s.taker);
      }
    }
    sc.add_out_bytes(-static_cast<std::ptrdiff_t>(n * sc.block));
  }

  void trim_slabs() {
    std::vector<std::pair<std::size_t, std::size_t>> freed;
    for (unsigned c = 0; c < class_count; ++c) {
      SizeClass& sc = classes[c];
      std::lock_guard lock(sc.mutex);
      freed.clear();
      for (std::uint32_t id = sc.partial[kShared]; id != kNone;) {  // where whole slabs are
        Slab& s = *sc.slab(id);
        id = s.next;
        if (s.available != s.all) continue;
        sc.unlink(s);
        set_owner(s, c, false);
        sc.unused_ids.push_back(s.id);
        sc.slab_total.store(sc.slab_total.load(std::memory_order_relaxed) - s.bytes, std::memory_order_relaxed);
        freed.emplace_back(s.offset, s.bytes);
      }
      if (freed.empty()) continue;
      std::lock_guard ranges(ranges_mutex);
      for (const auto& [offset, bytes] : freed) give_back_range(offset, bytes);
    }
  }

  // --- this thread's cache ---

  ThreadCache& my_cache() {
    const LastUsed last = last_used;
    return last.pool_uid == uid ? *last.cache : my_cache_slow();
  }
  [[gnu::noinline]] ThreadCache& my_cache_slow() {
    ThreadCaches& mine = this_thread_caches;
    auto it = std::find_if(mine.all.begin(), mine.all.end(), [&](const auto& e) { return e.first == uid; });
    if (it == mine.all.end()) {
      mine.forget_dead_pools();
      std::shared_ptr<ThreadCache> cache;
      {
        std::lock_guard lock(caches_mutex);
        std::uint32_t index = kShared + 1;  // the smallest free one, so the slab lists stay few
        while (std::any_of(caches.begin(), caches.end(), [&](const auto& c) { return c->index == index; })) ++index;
        cache = std::make_shared<ThreadCache>(this, index);
        caches.push_back(cache);
      }
      mine.all.emplace_back(uid, std::move(cache));
      it = std::prev(mine.all.end());
    }
    last_used = {uid, it->second.get()};
    return *it->second;
  }

  void flush(ThreadCache& cache) {
    for (unsigned c = 0; c < std::min(class_count, kMaxCachedClasses); ++c) {
      return_blocks(c, cache.blocks[c], cache.count[c]);
      cache.add_cached_bytes(-static_cast<std::ptrdiff_t>(cache.count[c] * classes[c].block));
      cache.count[c] = 0;
    }
  }

  /// An exiting thread's slabs become everyone's.
  void release_taker(std::uint32_t taker) {
    for (unsigned c = 0; c < class_count; ++c) {
      SizeClass& sc = classes[c];
      std::lock_guard lock(sc.mutex);
      while (sc.head(taker) != kNone) {
        Slab& s = *sc.slab(sc.head(taker));
        sc.unlink(s);
        sc.link(s, kShared);
      }
    }
  }

  // --- small blocks ---

  void* allocate_small(unsigned c) {
    SizeClass& sc = classes[c];
    CachedBlock got;
    if (sc.cache_capacity == 0) {
      if (take_blocks(c, kShared, &got, 1) == 0) return nullptr;
    } else {
      ThreadCache& cache = my_cache();
      std::uint32_t& count = cache.count[c];
      if (count == 0) [[unlikely]] {
        count = static_cast<std::uint32_t>(take_blocks(c, cache.index, cache.blocks[c], sc.cache_capacity / 2));
        cache.add_cached_bytes(static_cast<std::ptrdiff_t>(count * sc.block));
        if (count == 0) return nullptr;
      }
      got = cache.blocks[c][--count];
      cache.add_cached_bytes(-static_cast<std::ptrdiff_t>(sc.block));
    }
    got.slab->live[got.index].store(1, std::memory_order_relaxed);
    return pointer(got.offset);
  }

  void deallocate_small(std::size_t offset, std::size_t bytes, void* p) {
    const unsigned c = class_of(bytes);
    SizeClass& sc = classes[c];
    const std::size_t granule = offset >> kGranuleShift;
    const std::uint64_t owner = granule_owner[granule].load(std::memory_order_relaxed);
    Slab* s = nullptr;
    std::size_t index = 0;
    if (owner != 0 && (owner & kClassMask) == c) {
      const std::size_t in_slab = offset - ((granule - ((owner >> kDistanceShift) & kDistanceMask)) << kGranuleShift);
      index = in_slab >> sc.block_shift;
      if ((in_slab & (sc.block - 1)) == 0 && index < kMaxBlocksPerSlab)
        s = sc.slab(static_cast<std::uint32_t>(owner >> 32) - 1);
    }
    // The one check every thread agrees on: of two frees of a block, one exchange sees 0.
    if (s == nullptr || s->live[index].exchange(0, std::memory_order_relaxed) == 0) [[unlikely]]
      throw bad_small_free(c, offset, bytes, p);

    const CachedBlock freed{s, offset, index};
    if (sc.cache_capacity == 0) {
      return_blocks(c, &freed, 1);
      return;
    }
    ThreadCache& cache = my_cache();
    std::uint32_t& count = cache.count[c];
    if (count == sc.cache_capacity) [[unlikely]] {  // full: half goes back to the slabs
      const std::size_t half = sc.cache_capacity / 2;
      count -= static_cast<std::uint32_t>(half);
      return_blocks(c, cache.blocks[c] + count, half);
      cache.add_cached_bytes(-static_cast<std::ptrdiff_t>(half * sc.block));
    }
    cache.blocks[c][count++] = freed;
    cache.add_cached_bytes(static_cast<std::ptrdiff_t>(sc.block));
  }

  /// Says why `p` is not a live block of class `c`, looking at its slab under the class lock.
  [[gnu::noinline, gnu::cold]] Error bad_small_free(unsigned c, std::size_t offset, std::size_t bytes, void* p) {
    SizeClass& sc = classes[c];
    std::lock_guard lock(sc.mutex);
    const std::uint64_t owner = granule_owner[offset >> kGranuleShift].load(std::memory_order_relaxed);
    std::string why;
    if (owner == 0) {
      why = "it lies in no size-class slab (freed twice, or allocated with another size?)";
    } else if ((owner & kClassMask) != c) {
      why = "it lies in a slab of the " + format_bytes(kAlignment << (owner & kClassMask)) +
            " class (allocated with another size?)";
    } else {
      const Slab& s = *sc.slab(static_cast<std::uint32_t>(owner >> 32) - 1);
      const std::size_t in_slab = offset - s.offset;
      const bool block_start = (in_slab & (sc.block - 1)) == 0 && in_slab < s.bytes;
      why = block_start ? "it is already free (a double free?)" : "it is not the start of a block";
    }
    return Error("pool '" + name + "': deallocate(" + address(reinterpret_cast<std::uintptr_t>(p)) + ", " +
                 std::to_string(bytes) + " bytes): not a live " + format_bytes(sc.block) + " block: " + why +
                 "; pass exactly the pointer and the size given to allocate");
  }

  // --- large requests ---

  void* allocate_large(std::size_t bytes) {
    std::lock_guard lock(ranges_mutex);
    const std::optional<std::size_t> offset = take_range(bytes, kAlignment);
    if (!offset) return nullptr;
    large_live.emplace(*offset, bytes);
    large_bytes.store(large_bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    return pointer(*offset);
  }

  void deallocate_large(std::size_t offset, std::size_t bytes, void* p) {
    std::lock_guard lock(ranges_mutex);
    const auto it = large_live.find(offset);
    auto call = [&] {
      return "pool '" + name + "': deallocate(" + address(reinterpret_cast<std::uintptr_t>(p)) + ", " +
             std::to_string(bytes) + " bytes): ";
    };
    if (it == large_live.end())
      throw Error(call() + "not a live allocation above " + format_bytes(options.largest_class) +
                  " (freed twice, or allocated with another size?); pass exactly the pointer and the size given "
                  "to allocate");
    if (it->second != align_up(bytes, kAlignment))
      throw Error(call() + "the block was allocated as " + format_bytes(it->second) + " (" +
                  std::to_string(it->second) + " bytes after rounding to 256); pass the size given to allocate");
    large_bytes.store(large_bytes.load(std::memory_order_relaxed) - it->second, std::memory_order_relaxed);
    give_back_range(offset, it->second);
    large_live.erase(it);
  }

  // --- statistics (exact when no other thread is allocating) ---

  std::size_t cached_bytes() const {
    std::lock_guard lock(caches_mutex);
    std::size_t total = 0;
    for (const auto& cache : caches) total += cache->cached_bytes.load(std::memory_order_relaxed);
    return total;
  }
  std::size_t bytes_in_use() const {
    std::size_t out = large_bytes.load(std::memory_order_relaxed);
    for (unsigned c = 0; c < class_count; ++c) out += classes[c].out_bytes.load(std::memory_order_relaxed);
    const std::size_t cached = cached_bytes();
    return out > cached ? out - cached : 0;
  }
  std::size_t bytes_free_in_slabs() const {
    std::size_t total = cached_bytes();
    for (unsigned c = 0; c < class_count; ++c) {
      const std::size_t out = classes[c].out_bytes.load(std::memory_order_relaxed);
      const std::size_t slabs = classes[c].slab_total.load(std::memory_order_relaxed);
      total += slabs > out ? slabs - out : 0;
    }
    return total;
  }

  // --- the entry points' bodies, here so the fast paths inline into them ---

  void* try_allocate(std::size_t bytes) {
    if (is_small(bytes)) [[likely]] {
      if (void* p = allocate_small(class_of(bytes))) [[likely]]
        return p;
    }
    return try_allocate_after_trim(bytes);
  }

  [[gnu::noinline]] void* try_allocate_after_trim(std::size_t bytes) {
    if (is_small(bytes)) {
      trim();  // empty slabs of other classes may make room for a new slab of this one
      return allocate_small(class_of(bytes));
    }
    if (bytes > capacity) return nullptr;
    const std::size_t rounded = align_up(bytes, kAlignment);
    if (void* p = allocate_large(rounded)) return p;
    trim();
    return allocate_large(rounded);
  }

  void trim() {
    flush(my_cache());
    trim_slabs();
  }
};

void flush_on_thread_exit(ThreadCache& cache) {
  std::lock_guard lock(cache.exit_mutex);
  if (cache.pool == nullptr) return;  // the pool went first
  cache.pool->flush(cache);
  cache.pool->release_taker(cache.index);
  std::lock_guard caches(cache.pool->caches_mutex);
  std::erase_if(cache.pool->caches, [&](const auto& c) { return c.get() == &cache; });
}

}  // namespace

struct PoolAllocator::Impl : PoolCore {};

PoolAllocator::PoolAllocator(void* base, std::size_t capacity, std::string name, PoolOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = std::move(name);
  m.options = options;
  const std::string pool = "pool '" + m.name + "'";
  if (base == nullptr) throw Error(pool + " was given a null region; pass the start of the memory it should manage");
  if (!is_power_of_two(options.largest_class) || options.largest_class < kAlignment ||
      options.largest_class > kMaxLargestClass)
    throw Error(pool + ": PoolOptions::largest_class is " + std::to_string(options.largest_class) +
                "; use a power of two from 256 to 1 GiB (default 1 MiB)");
  if (!is_power_of_two(options.slab_bytes) || options.slab_bytes < kGranule)
    throw Error(pool + ": PoolOptions::slab_bytes is " + std::to_string(options.slab_bytes) +
                "; use a power of two of 16 KiB or more (default 1 MiB)");

  const auto first = reinterpret_cast<std::uintptr_t>(base);
  m.start = align_up(first, kAlignment);
  const std::size_t skipped = m.start - first;
  if (capacity < skipped + kAlignment)
    throw Error(pool + ": the region of " + std::to_string(capacity) + " bytes at " + address(first) +
                " holds no 256-byte-aligned block of 256 bytes; give it a larger region");
  m.capacity = (capacity - skipped) & ~(kAlignment - 1);
  const std::size_t granules = (m.capacity + kGranule - 1) >> kGranuleShift;
  if (granules > kMaxGranules)
    throw Error(pool + ": a region of " + format_bytes(m.capacity) +
                " is more than one pool can index (64 TiB); split it into several pools");

  m.class_count = PoolCore::class_of(options.largest_class) + 1;
  m.classes = std::make_unique<SizeClass[]>(m.class_count);
  for (unsigned c = 0; c < m.class_count; ++c) {
    SizeClass& sc = m.classes[c];
    sc.block = kAlignment << c;
    sc.block_shift = kAlignmentShift + c;
    sc.cache_capacity = cache_capacity(c, options.thread_cache_bytes);
    // A cache refill (half the cache) takes a whole slab, so each slab's blocks tend to stay with
    // one thread. Not below a granule, which a slab occupies anyway.
    std::size_t slab_blocks = std::min(kMaxBlocksPerSlab, options.slab_bytes >> sc.block_shift);
    if (sc.cache_capacity != 0) slab_blocks = std::min(slab_blocks, sc.cache_capacity / 2);
    slab_blocks = std::max({slab_blocks, std::min(kMaxBlocksPerSlab, kGranule >> sc.block_shift), std::size_t{1}});
    sc.slab_bytes = slab_blocks << sc.block_shift;
    sc.chunks = std::make_unique<std::atomic<Slab*>[]>(granules / kSlabsPerChunk + 1);
  }
  m.granule_owner = std::make_unique<std::atomic<std::uint64_t>[]>(granules);
  m.add_range(0, m.capacity);
}

PoolAllocator::~PoolAllocator() {
  Impl& m = *impl_;
  if (const std::size_t in_use = m.bytes_in_use(); in_use != 0)
    log(LogLevel::warn, "pool '" + m.name + "' destroyed with " + format_bytes(in_use) +
                            " still allocated: those blocks were never deallocated");
  // Threads that used the pool keep their (now empty-handed) caches until they exit.
  std::vector<std::shared_ptr<ThreadCache>> caches;
  {
    std::lock_guard lock(m.caches_mutex);
    caches.swap(m.caches);
  }
  for (auto& cache : caches) {
    std::lock_guard lock(cache->exit_mutex);
    cache->pool = nullptr;
  }
}

void* PoolAllocator::allocate(std::size_t bytes) {
  if (void* p = impl_->try_allocate(bytes)) return p;
  const Impl& m = *impl_;
  throw Error("pool '" + m.name + "' cannot allocate " + format_bytes(bytes) + " (" + std::to_string(bytes) +
              " bytes): " + format_bytes(m.bytes_in_use()) + " of " + format_bytes(m.capacity) +
              " in use (largest free range " + format_bytes(largest_free_range()) + ", " +
              format_bytes(m.bytes_free_in_slabs()) +
              " free in size-class slabs and thread caches); deallocate blocks that are no longer needed, or give "
              "the pool a larger region");
}

void* PoolAllocator::try_allocate(std::size_t bytes) { return impl_->try_allocate(bytes); }

void PoolAllocator::deallocate(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  Impl& m = *impl_;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (a < m.start || a - m.start >= m.capacity)
    throw Error("pool '" + m.name + "': deallocate(" + address(a) + ", " + std::to_string(bytes) +
                " bytes) got a pointer outside the pool's region [" + address(m.start) + ", " +
                address(m.start + m.capacity) + "); give it back to the allocator that returned it");
  if (m.is_small(bytes))
    m.deallocate_small(a - m.start, bytes, p);
  else
    m.deallocate_large(a - m.start, bytes, p);
}

void PoolAllocator::trim() { impl_->trim(); }

std::size_t PoolAllocator::block_bytes(std::size_t bytes) const noexcept {
  if (impl_->is_small(bytes)) return kAlignment << PoolCore::class_of(bytes);
  if (bytes > std::numeric_limits<std::size_t>::max() - kAlignment) return std::numeric_limits<std::size_t>::max();
  return align_up(bytes, kAlignment);
}

std::size_t PoolAllocator::bytes_in_use() const { return impl_->bytes_in_use(); }

std::size_t PoolAllocator::capacity() const noexcept { return impl_->capacity; }

std::size_t PoolAllocator::largest_free_range() const {
  std::lock_guard lock(impl_->ranges_mutex);
  return impl_->free_by_size.empty() ? 0 : impl_->free_by_size.rbegin()->first;
}

const std::string& PoolAllocator::name() const noexcept { return impl_->name; }

}  // namespace tessera
