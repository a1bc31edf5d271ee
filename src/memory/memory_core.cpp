// Budgets and least-recently-used eviction of device replicas.
#include "memory_core.hpp"

#include "buffer_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/bytes.hpp>

#include <chrono>
#include <limits>
#include <thread>

namespace tessera::detail {

namespace {

// How long a placement keeps retrying when the only replicas it could evict belong to buffers
// another thread is using at that moment (their mutex is only ever tried, never waited for, so
// two threads evicting each other's buffers cannot deadlock).
constexpr auto busy_retry_limit = std::chrono::seconds(1);
constexpr auto busy_retry_pause = std::chrono::microseconds(100);

}  // namespace

MemoryCore::MemoryCore(DeviceSet& devices, const MemoryOptions& options) {
  devices_.push_back(&devices.host());
  for (std::size_t i = 0; i < devices.num_accelerators(); ++i) devices_.push_back(&devices.accelerator(i));
  const std::size_t n = devices.num_accelerators();
  const std::vector<std::size_t>& given = options.device_budgets;
  if (given.size() > 1 && given.size() != n)
    throw Error("MemoryOptions::device_budgets has " + std::to_string(given.size()) + " entries but " + devices.spec() +
                " selected " + std::to_string(n) +
                " accelerator(s); give none (each device's capacity), one (every device) or one per accelerator");
  budgets_.push_back(std::numeric_limits<std::size_t>::max());
  for (std::size_t i = 0; i < n; ++i) {
    Device& d = *devices_[i + 1];
    const std::size_t budget = given.empty() ? d.memory_capacity() : given.size() == 1 ? given[0] : given[i];
    if (budget == 0)
      throw Error("MemoryOptions::device_budgets gives " + d.name() +
                  " a budget of 0 bytes, so nothing could ever be placed there; give it at least the size of one "
                  "replica, or leave the budgets out to use each device's capacity (" +
                  format_bytes(d.memory_capacity()) + " here)");
    budgets_.push_back(budget);
  }
  lru_.resize(devices_.size());
  used_.assign(devices_.size(), 0);
}

Device& MemoryCore::device(std::size_t space) const {
  if (space >= devices_.size())
    throw Error("memory space " + std::to_string(space) + " does not exist: there are spaces 0 (host) to " +
                std::to_string(devices_.size() - 1) + "; space i is devices.accelerator(i - 1)");
  return *devices_[space];
}

std::size_t MemoryCore::space_of(const Device& d) const {
  for (std::size_t s = 0; s < devices_.size(); ++s)
    if (devices_[s] == &d) return s;
  throw Error("device " + d.name() +
              " is not one of this memory manager's devices; use a device of the DeviceSet the manager was made with");
}

std::string MemoryCore::space_name(std::size_t space) const { return device(space).name(); }

std::size_t MemoryCore::budget(std::size_t space) const {
  device(space);  // the range check
  return budgets_[space];
}

std::size_t MemoryCore::bytes_in_use(std::size_t space) const {
  device(space);
  std::lock_guard lock(mutex_);
  return used_[space];
}

MemoryStats MemoryCore::stats() const {
  MemoryStats s;
  s.transferred.host_to_device = h2d_.load(std::memory_order_relaxed);
  s.transferred.device_to_host = d2h_.load(std::memory_order_relaxed);
  s.transferred.device_to_device = d2d_.load(std::memory_order_relaxed);
  s.copies = copies_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.bytes_written_back = written_back_.load(std::memory_order_relaxed);
  s.host_waits = host_waits_.load(std::memory_order_relaxed);
  s.device_allocations = device_allocations_.load(std::memory_order_relaxed);
  return s;
}

void MemoryCore::synchronize() {
  for (std::size_t s = 1; s < devices_.size(); ++s) devices_[s]->synchronize();
}

void MemoryCore::count_transfer(CopyDirection direction, std::size_t bytes) noexcept {
  auto& counter = direction == CopyDirection::host_to_device   ? h2d_
                  : direction == CopyDirection::device_to_host ? d2h_
                                                               : d2d_;
  counter.fetch_add(bytes, std::memory_order_relaxed);
  copies_.fetch_add(1, std::memory_order_relaxed);
}

void MemoryCore::count_eviction(std::size_t bytes_written_back) noexcept {
  evictions_.fetch_add(1, std::memory_order_relaxed);
  written_back_.fetch_add(bytes_written_back, std::memory_order_relaxed);
}

void* MemoryCore::place(BufferState& self, std::size_t space) {
  Device& d = device(space);
  const std::size_t bytes = self.bytes;
  if (bytes > budgets_[space]) cannot_place(self, space, {});
  const auto give_up_at = std::chrono::steady_clock::now() + busy_retry_limit;
  for (;;) {
    bool reserved = false;
    {
      std::lock_guard lock(mutex_);
      if (bytes <= budgets_[space] - used_[space]) {
        used_[space] += bytes;  // reserved, so a concurrent placement cannot take the same room
        reserved = true;
      }
    }
    if (reserved) {
      // The pool, not the device library: no cudaMalloc on the hot path. It may refuse even
      // within the budget (fragmentation, a budget above capacity); then evict as for the budget.
      void* p = d.try_allocate(bytes);
      std::lock_guard lock(mutex_);
      if (p != nullptr) {
        device_allocations_.fetch_add(1, std::memory_order_relaxed);
        LruList& list = lru_[space];
        list.push_back({&self, self.weak_from_this()});
        self.replicas[space].lru = std::prev(list.end());
        return p;
      }
      used_[space] -= bytes;
    }
    const EvictionPass pass = evict_one(self, space);
    if (pass.evicted) continue;
    if (pass.busy_count == 0 || std::chrono::steady_clock::now() > give_up_at) cannot_place(self, space, pass);
    std::this_thread::sleep_for(busy_retry_pause);
  }
}

MemoryCore::EvictionPass MemoryCore::evict_one(BufferState& self, std::size_t space) {
  EvictionPass pass;
  // Strong references taken under the lock (a buffer being destroyed yields none), used after
  // it: evicting blocks on events, and the last reference may be dropped here, whose destructor
  // takes the lock.
  std::vector<std::shared_ptr<BufferState>> candidates;
  {
    std::lock_guard lock(mutex_);
    for (const LruEntry& e : lru_[space])
      if (e.state != &self)
        if (auto s = e.weak.lock()) candidates.push_back(std::move(s));
  }
  for (const auto& victim : candidates) {
    std::unique_lock victim_lock(victim->mutex, std::try_to_lock);
    if (!victim_lock.owns_lock()) {
      ++pass.busy_count;
      ++pass.stuck_count;
      pass.stuck_bytes += victim->bytes;
      continue;
    }
    if (victim->replicas[space].data == nullptr) continue;  // evicted by another thread meanwhile
    if (!victim->evictable(space)) {
      ++pass.stuck_count;
      pass.stuck_bytes += victim->bytes;
      continue;
    }
    count_eviction(victim->evict(space));
    pass.evicted = true;
    return pass;
  }
  return pass;
}

void MemoryCore::touch(BufferState& self, std::size_t space) {
  std::lock_guard lock(mutex_);
  LruList& list = lru_[space];
  list.splice(list.end(), list, self.replicas[space].lru);
}

void MemoryCore::unlink(BufferState& self, std::size_t space) {
  std::lock_guard lock(mutex_);
  lru_[space].erase(self.replicas[space].lru);
  used_[space] -= self.bytes;
}

void MemoryCore::cannot_place(const BufferState& self, std::size_t space, const EvictionPass& last) const {
  const Device& d = *devices_[space];
  const std::string request = "Buffer '" + self.name + "': cannot place " + format_bytes(self.bytes) + " (" +
                              std::to_string(self.bytes) + " bytes) on " + d.name() + ": ";
  const std::size_t budget = budgets_[space];
  if (self.bytes > budget)
    throw Error(request + "that is more than the device's whole budget of " + format_bytes(budget) +
                "; raise MemoryOptions::device_budgets (the device has " + format_bytes(d.memory_capacity()) +
                ") or split the data into smaller buffers");
  std::size_t used = 0;
  {
    std::lock_guard lock(mutex_);
    used = used_[space];
  }
  if (used + self.bytes <= budget && last.stuck_bytes == 0) {
    // The budget has room, so the device's own allocator said no: its memory is taken by
    // allocations outside this MemoryManager's replicas, or too cut up for the request.
    const std::size_t in_use = d.bytes_in_use();
    const std::size_t other = in_use > used ? in_use - used : 0;
    throw Error(request + "the budget of " + format_bytes(budget) + " has room (" + format_bytes(used) +
                " in use by replicas), but the device could not give " + format_bytes(self.bytes) +
                " in one piece: its memory has " + format_bytes(in_use) + " of " + format_bytes(d.memory_capacity()) +
                " in use, " + format_bytes(other) +
                " of it by allocations other than this MemoryManager's replicas (another MemoryManager, "
                "targetMalloc, Device::allocate) or lost between them. Free those, or set "
                "MemoryOptions::device_budgets to what the device can really give this MemoryManager");
  }
  throw Error(request + "budget " + format_bytes(budget) + ", " + format_bytes(used) + " in use by replicas, " +
              format_bytes(last.stuck_bytes) + " of it held by " + std::to_string(last.stuck_count) +
              " replica(s) that cannot be evicted now (an access between prepare and finish, a host hold not yet "
              "released, or another thread using the buffer); the device's memory has " +
              format_bytes(d.bytes_in_use()) + " of " + format_bytes(d.memory_capacity()) +
              " in use. Finish accesses and release host holds before this one, keep fewer buffers in use at "
              "once, or raise the budget");
}

}  // namespace tessera::detail
