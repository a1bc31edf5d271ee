#pragma once
// A CUDA device's side of executor traces: timing events (a pool of their own, so the events
// that order work stay cheap ones without timing) and the reference that maps a timing event's
// GPU time onto the host's steady clock, in which TraceSources timestamps everything.

#include "cuda_event_pool.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tessera::detail {

/// A timing event the GPU passed when the host's steady clock read `host_ns`.
struct CudaClockReference {
  std::shared_ptr<void> event;
  std::int64_t host_ns = 0;  ///< steady_clock nanoseconds since its epoch
};

class CudaTraceClock {
 public:
  CudaTraceClock(int ordinal, std::string device_name);
  ~CudaTraceClock();  // destroys its stream, if it made one
  CudaTraceClock(const CudaTraceClock&) = delete;
  CudaTraceClock& operator=(const CudaTraceClock&) = delete;

  /// A timing event of this GPU. Throws tessera::Error when CUDA cannot make one.
  std::shared_ptr<void> acquire() { return events_->acquire(); }
  /// The reference for events recorded from now on: made at the first call after restart(), and
  /// again once it is a minute old (cudaEventElapsedTime is a float of milliseconds, so its
  /// resolution falls with the distance from the reference). Throws tessera::Error when CUDA fails.
  std::shared_ptr<const CudaClockReference> reference();
  /// Forgets the reference, so that the next trace measures from one of its own.
  void restart() noexcept;
  /// Where the done timing event `event` falls on the host's steady clock (nanoseconds since its
  /// epoch); nullopt when it has not completed or CUDA cannot tell.
  static std::optional<std::int64_t> host_time(const CudaClockReference& reference, void* event) noexcept;

 private:
  int ordinal_;
  std::string device_name_;
  std::shared_ptr<CudaEventPool> events_;
  std::mutex mutex_;
  // Made at the first reference. The reference is recorded here, not on a stream with queued
  // work, so that synchronizing it waits for nothing but the GPU reaching it.
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<const CudaClockReference> current_;
};

}  // namespace tessera::detail
