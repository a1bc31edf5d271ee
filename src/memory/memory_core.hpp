#pragma once
// The shared part of a MemoryManager: spaces, budgets, the LRU list of device replicas per
// space, and statistics. Buffers hold it by shared_ptr, so it outlives the manager handle
// while any buffer (or transfer in flight for one) exists.
//
// Locking: a buffer's mutex, then this mutex; never the other way round, and nothing waits on
// an event while holding this mutex (a stream callback may drop the last reference to a buffer,
// whose destructor takes it).

#include <tessera/device/device.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

class BufferState;

struct LruEntry {
  BufferState* state;
  std::weak_ptr<BufferState> weak;  // empty once the buffer is being destroyed: never a victim then
};
using LruList = std::list<LruEntry>;

class MemoryCore {
 public:
  MemoryCore(DeviceSet& devices, const MemoryOptions& options);

  std::size_t num_spaces() const noexcept { return devices_.size(); }
  Device& device(std::size_t space) const;
  std::size_t space_of(const Device& device) const;
  std::string space_name(std::size_t space) const;
  std::size_t budget(std::size_t space) const;
  std::size_t bytes_in_use(std::size_t space) const;
  MemoryStats stats() const;
  void synchronize();

  /// Device memory for `self`'s replica in `space` (an accelerator), evicting other buffers'
  /// least recently used replicas until it fits; the replica joins the LRU list as the most
  /// recent. `self` is locked by the caller. Throws tessera::Error naming the buffer, the
  /// request and the budget when nothing more can be evicted.
  void* place(BufferState& self, std::size_t space);
  /// Makes the replica the most recently used in its space.
  void touch(BufferState& self, std::size_t space);
  /// Takes a freed replica out of the LRU list and the budget's account.
  void unlink(BufferState& self, std::size_t space);

  void count_transfer(CopyDirection direction, std::size_t bytes) noexcept;
  void count_eviction(std::size_t bytes_written_back) noexcept;
  void count_host_wait() noexcept { host_waits_.fetch_add(1, std::memory_order_relaxed); }

 private:
  struct EvictionPass {
    bool evicted = false;
    std::size_t stuck_bytes = 0;  // replicas in use, held, or locked by another thread
    std::size_t stuck_count = 0;
    std::size_t busy_count = 0;  // of those, locked by another thread (worth retrying)
  };
  EvictionPass evict_one(BufferState& self, std::size_t space);
  [[noreturn]] void cannot_place(const BufferState& self, std::size_t space, const EvictionPass& last) const;

  std::vector<Device*> devices_;      // by space
  std::vector<std::size_t> budgets_;  // by space; the host's is SIZE_MAX
  mutable std::mutex mutex_;          // guards lru_, used_ and every LruEntry/Replica::lru
  std::vector<LruList> lru_;          // by space, least recent first
  std::vector<std::size_t> used_;     // by space: bytes of replicas (and reservations)

  // Counters only: relaxed, since nothing is ordered by them and stats() is a snapshot.
  std::atomic<std::size_t> h2d_{0}, d2h_{0}, d2d_{0}, copies_{0}, evictions_{0}, written_back_{0};
  std::atomic<std::size_t> host_waits_{0}, device_allocations_{0};
};

}  // namespace tessera::detail
