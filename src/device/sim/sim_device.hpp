#pragma once
// A simulated discrete device: its own memory (a separate host arena with a capacity), one
// thread per stream running enqueued work in order, real events, and copies that move bytes
// between arenas, optionally slowed to a given bandwidth and latency so that the overlap of
// copies and kernels shows in traces. How multi-device code is tested where no GPU exists.

#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/pool_allocator.hpp>

#include <chrono>
#include <memory>
#include <new>

namespace tessera::detail {

using SimDeviceOptions = SimOptions;

class SimDevice final : public Device {
public:
  /// `slowdown`: how many times its CPU time each piece of compute work takes; 0: no model.
  SimDevice(int ordinal, const SimDeviceOptions& options, double slowdown = 0.0);
  ~SimDevice() override;

  void* allocate(std::size_t bytes) override;
  void* try_allocate(std::size_t bytes) override;
  void deallocate(void* p, std::size_t bytes) override;
  std::size_t memory_capacity() const noexcept override { return pool_->capacity(); }
  std::size_t bytes_in_use() const noexcept override { return pool_->bytes_in_use(); }
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction, Stream& stream) override;
  /// Stages in ordinary host memory, as a GPU stages in its pinned pool: the source is read at
  /// once and the device copy runs in stream order, so code above behaves as on a GPU.
  bool copy_to_device_staged(void* dst, const void* src, std::size_t bytes, Stream& stream) override;

  /// Whether `p` points into this device's memory.
  bool owns(const void* p) const noexcept;
  double slowdown() const noexcept { return slowdown_; }

private:
  SimDeviceOptions options_;
  double slowdown_;
  struct ArenaDelete {
    std::size_t bytes;  // no initialiser: a nested class's initialisers are unusable inside the outer one
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, ArenaDelete> memory_;  // the device's own memory: nothing else lives here
  std::unique_ptr<PoolAllocator> pool_;
};

}  // namespace tessera::detail
