#pragma once
// A CUDA GPU as a Device: one cudaMalloc for the whole device pool and one cudaHostAlloc for a
// pinned host pool, both made at start-up and carved by PoolAllocator; non-blocking streams
// (compute streams, one copy stream per direction); copies with cudaMemcpyAsync, and peer copies
// to other GPUs.

#include "cuda_event_pool.hpp"
#include "cuda_staging.hpp"
#include "cuda_trace_clock.hpp"

#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/pool_allocator.hpp>

#include <memory>
#include <string>
#include <vector>

namespace tessera::detail {

class CudaDevice final : public Device {
 public:
  /// Throws tessera::Error when the GPU cannot be used or the pools cannot be reserved.
  CudaDevice(int ordinal, const CudaOptions& options);
  ~CudaDevice() override;  // streams finish their work before the memory goes

  void* allocate(std::size_t bytes) override;
  void* try_allocate(std::size_t bytes) override;
  void deallocate(void* p, std::size_t bytes) override;
  std::size_t memory_capacity() const noexcept override { return pool_->capacity(); }
  std::size_t bytes_in_use() const noexcept override { return pool_->bytes_in_use(); }
  void* try_allocate_pinned_host(std::size_t bytes) override;
  void deallocate_pinned_host(void* p, std::size_t bytes) override;
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction, Stream& stream) override;
  bool copy_to_device_staged(void* dst, const void* src, std::size_t bytes, Stream& stream) override;
  void make_current() override;

  /// Whether `p` points into this device's pool.
  bool owns(const void* p) const noexcept;
  /// "NVIDIA H100 80GB HBM3".
  const std::string& model() const noexcept { return model_; }
  /// {9, 0} for sm_90.
  std::pair<int, int> compute_capability() const noexcept { return {cc_major_, cc_minor_}; }
  std::size_t total_memory() const noexcept { return total_memory_; }
  std::size_t pinned_host_capacity() const noexcept { return pinned_pool_ ? pinned_pool_->capacity() : 0; }
  /// Ordinals of the GPUs whose memory this one reaches directly (peer access enabled).
  const std::vector<int>& peers() const noexcept { return peers_; }
  void add_peer(int ordinal) { peers_.push_back(ordinal); }
  /// The CUDA-specific part of DeviceSet::describe().
  std::string summary() const;

 private:
  struct DeviceFree {
    int ordinal;
    void operator()(void* p) const noexcept;
  };
  struct HostFree {
    void operator()(void* p) const noexcept;
  };

  std::string model_;
  int cc_major_ = 0, cc_minor_ = 0;
  std::size_t total_memory_ = 0;
  std::vector<int> peers_;
  // Regions before the pools over them, so the pools go first.
  std::unique_ptr<void, DeviceFree> memory_;
  std::size_t memory_bytes_ = 0;
  std::unique_ptr<void, HostFree> pinned_;
  std::unique_ptr<PoolAllocator> pool_;
  std::unique_ptr<PoolAllocator> pinned_pool_;
  std::shared_ptr<CudaEventPool> events_;
  std::shared_ptr<CudaTraceClock> trace_clock_;  // shared with the streams, which time traced work
  std::unique_ptr<PinnedStaging> staging_;  // over pinned_pool_, when there is one
};

}  // namespace tessera::detail
