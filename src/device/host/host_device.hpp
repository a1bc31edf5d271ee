#pragma once
// The host as a device: memory is ordinary host memory, and its streams run work at once on
// the calling thread (a worker of the executor), which keeps stream order trivially.

#include <tessera/device/device.hpp>

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace tessera::detail {

class HostDevice final : public Device {
public:
  HostDevice();

  void* allocate(std::size_t bytes) override;
  void* try_allocate(std::size_t bytes) override;
  void deallocate(void* p, std::size_t bytes) override;
  std::size_t memory_capacity() const noexcept override { return capacity_; }
  std::size_t bytes_in_use() const noexcept override { return in_use_.load(std::memory_order_relaxed); }
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction, Stream& stream) override;

  ~HostDevice() override;

private:
  std::size_t capacity_;
  std::atomic<std::size_t> in_use_{0};

  // Large blocks freed recently, reused for the next allocation of the same size. glibc gives
  // large blocks back to the system (munmap, heap trimming), above all when another thread
  // frees them (a worker completing an object's last task), so a loop that allocates objects
  // of one size (PREMA's DGEMM loop) faulted in fresh zeroed pages each iteration.
  std::mutex reuse_mutex_;
  std::vector<std::pair<std::size_t, void*>> reusable_;  // (bytes, block), oldest first
  std::size_t reusable_bytes_ = 0;
};

}  // namespace tessera::detail
