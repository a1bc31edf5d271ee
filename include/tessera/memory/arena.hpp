#pragma once
// tessera::Arena: a linear (bump) allocator over a range of memory it neither owns nor touches,
// freed all at once by reset() (Ripple's per-graph-run scratch, §5.1 of the Ripple paper).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/memory/bytes.hpp"

namespace tessera {

/// Hands out consecutive pieces of `[base, base + capacity)` and frees them all at once.
///
/// The arena only does arithmetic on addresses: it never reads or writes the range, so the range
/// may be GPU memory, pinned host memory or a slice of a PoolAllocator block. The caller owns
/// the range and keeps it alive for as long as the arena hands out pointers into it.
///
/// Not thread safe, by design: an arena belongs to one worker or one device stream, and a lock
/// would cost more than the bump itself. Give each thread its own arena.
///
///   tessera::Arena scratch(block, 1 << 20, "gpu0:scratch");
///   for (int step = 0; step < steps; ++step) {
///     auto* flux = static_cast<double*>(scratch.allocate(n * sizeof(double)));
///     ...
///     scratch.reset();  // every pointer of this step is dead now
///   }
class Arena {
 public:
  /// `base` may be any address (even one this process cannot dereference); `name` appears in
  /// error messages.
  ///
  ///   std::vector<std::byte> host(4096);
  ///   tessera::Arena arena(host.data(), host.size(), "host-scratch");
  Arena(void* base, std::size_t capacity, std::string name)
      : base_(reinterpret_cast<std::uintptr_t>(base)), capacity_(capacity), name_(std::move(name)) {
    if (base == nullptr && capacity != 0)
      throw Error("arena '" + name_ + "' was given a null base with capacity " + format_bytes(capacity) +
                  "; pass the start of the memory range it should hand out");
  }

  // Copying would let two arenas hand out the same bytes; a moved-from arena is empty.
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&& other) noexcept
      : base_(std::exchange(other.base_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        used_(std::exchange(other.used_, 0)),
        high_water_(std::exchange(other.high_water_, 0)),
        name_(std::move(other.name_)) {}
  Arena& operator=(Arena&& other) noexcept {
    base_ = std::exchange(other.base_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    used_ = std::exchange(other.used_, 0);
    high_water_ = std::exchange(other.high_water_, 0);
    name_ = std::move(other.name_);
    return *this;
  }

  /// `bytes` at the next address that is a multiple of `alignment` (a power of two). Throws
  /// tessera::Error when it does not fit or the alignment is not a power of two.
  ///
  /// A zero-byte request returns the aligned current position without advancing: never null,
  /// not dereferenceable, and possibly equal to the next allocation's pointer.
  ///
  ///   auto* keys = static_cast<std::uint32_t*>(arena.allocate(n * sizeof(std::uint32_t), 64));
  void* allocate(std::size_t bytes, std::size_t alignment = 256) {
    if (void* p = try_allocate(bytes, alignment)) return p;
    throw Error("arena '" + name_ + "' cannot allocate " + format_bytes(bytes) + " (" + std::to_string(bytes) +
                " bytes, aligned to " + std::to_string(alignment) + "): " + format_bytes(used_) + " of " +
                format_bytes(capacity_) + " used (" + std::to_string(used_) + " of " + std::to_string(capacity_) +
                " bytes); call reset() once earlier allocations are dead, or give the arena a larger range");
  }

  /// As allocate(), but nullptr when the request does not fit (a bad alignment still throws:
  /// that is a bug in the caller, not a full arena).
  ///
  ///   void* p = arena.try_allocate(bytes);
  ///   if (!p) p = pool.allocate(bytes);  // spill to the general pool
  void* try_allocate(std::size_t bytes, std::size_t alignment = 256) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      throw Error("arena '" + name_ + "': alignment " + std::to_string(alignment) +
                  " is not a power of two; pass 1, 2, 4, 8, ... (the default 256 suits GPU memory)");
    const std::uintptr_t next = base_ + used_;
    const std::size_t padding = (alignment - next % alignment) % alignment;
    const std::size_t left = capacity_ - used_;
    if (padding > left || bytes > left - padding) return nullptr;
    if (bytes != 0) {
      used_ += padding + bytes;
      if (used_ > high_water_) high_water_ = used_;
    }
    return reinterpret_cast<void*>(next + padding);
  }

  /// Frees everything at once; pointers handed out before are dead afterwards.
  ///
  ///   graph_scratch.reset();  // at the start of each graph run
  void reset() noexcept { used_ = 0; }

  /// Bytes handed out since the last reset, alignment padding included.
  std::size_t used() const noexcept { return used_; }
  std::size_t capacity() const noexcept { return capacity_; }
  /// The largest used() since construction: how big the range really needs to be.
  std::size_t high_water() const noexcept { return high_water_; }
  const std::string& name() const noexcept { return name_; }

 private:
  // An integer, not a pointer: the range may not be host memory, and pointer arithmetic
  // outside a host object is undefined.
  std::uintptr_t base_;
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::size_t high_water_ = 0;
  std::string name_;
};

}  // namespace tessera
