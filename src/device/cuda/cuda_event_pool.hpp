#pragma once
// Recycled cudaEvent_t objects of one GPU, so that Stream::record() creates no CUDA event once
// the pool has grown to the number of events alive at a time. A device keeps two pools: events
// for ordering (no timing) and, made only while a trace records, events that time stream work.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

class CudaEventPool : public std::enable_shared_from_this<CudaEventPool> {
 public:
  /// What the pool's events are for: `ordering` ones have timing disabled (cheaper to record
  /// and to wait on); `timing` ones serve cudaEventElapsedTime; a thread waiting on a
  /// `blocking` one sleeps instead of spinning (cudaEventBlockingSync).
  enum class Kind : std::uint8_t { ordering, timing, blocking };
  /// `initial` events are created at once.
  static std::shared_ptr<CudaEventPool> create(int ordinal, std::string device_name, std::size_t initial,
                                               Kind kind = Kind::ordering);
  ~CudaEventPool();  // destroys the events it holds
  CudaEventPool(const CudaEventPool&) = delete;
  CudaEventPool& operator=(const CudaEventPool&) = delete;

  /// An event of this GPU; dropping the last reference gives it back to the pool, which the
  /// reference keeps alive, so an Event may outlive its device. Throws tessera::Error when a new
  /// event cannot be created.
  std::shared_ptr<void> acquire();

 private:
  CudaEventPool(int ordinal, std::string device_name, Kind kind)
      : ordinal_(ordinal), device_name_(std::move(device_name)), kind_(kind) {}
  cudaEvent_t create_event();
  void give_back(cudaEvent_t event) noexcept;

  int ordinal_;
  std::string device_name_;
  Kind kind_;
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
  std::size_t created_ = 0;  // events made, so free_'s capacity can hold them all
};

}  // namespace tessera::detail
