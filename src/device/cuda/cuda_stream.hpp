#pragma once
// A stream of a CUDA device: a real cudaStream_t (non-blocking, so it never synchronises with the
// legacy default stream). Host work and callbacks run as CUDA host functions in stream order;
// events are CUDA events, queried and waited on directly (no host function per event).

#include "cuda_event_pool.hpp"

#include <tessera/device/stream.hpp>

#include <cuda_runtime_api.h>

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace tessera::detail {

class CudaStream final : public Stream {
 public:
  /// Throws tessera::Error when CUDA cannot create the stream.
  CudaStream(Device* device, StreamRole role, std::string name, std::shared_ptr<CudaEventPool> events);
  ~CudaStream() override;  // waits for what is queued, then destroys the stream

  /// `work` runs on a CUDA runtime thread and must make no CUDA calls (CUDA forbids it there).
  void enqueue_host(std::function<void()> work, std::string label = "work") override;
  void wait(const Event& e) override;
  void then(std::function<void()> callback) override;
  void retain(std::shared_ptr<const void> object) override;
  void* native_handle() const noexcept override { return stream_; }

  cudaStream_t cuda_stream() const noexcept { return stream_; }

 private:
  void record_into(std::shared_ptr<EventState> state) override;
  void drop_retained() noexcept override;
  /// Moves out the retained objects whose events are done (or all of them), in stream order.
  std::vector<std::shared_ptr<const void>> take_retained(bool all) noexcept;
  /// Enqueues `work` as a host function; exceptions it throws are logged, never passed to CUDA.
  void launch_host(std::function<void()> work, std::string label);

  cudaStream_t stream_ = nullptr;
  std::shared_ptr<CudaEventPool> events_;
  struct Retained {
    std::shared_ptr<void> event;
    std::shared_ptr<const void> object;
  };
  std::mutex retained_mutex_;
  std::deque<Retained> retained_;
};

}  // namespace tessera::detail
