#pragma once
// A stream of a CUDA device: a real cudaStream_t (non-blocking, so it never synchronises with the
// legacy default stream). Host work and callbacks run as CUDA host functions in stream order;
// events are CUDA events, queried and waited on directly (no host function per event). While an
// executor records a trace, host work, copies and submit spans are bracketed by timing events,
// which drain() turns into slices of the stream's track.

#include "../../core/trace_sources.hpp"
#include "cuda_event_pool.hpp"
#include "cuda_trace_clock.hpp"

#include <tessera/core/function_ref.hpp>
#include <tessera/device/stream.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace tessera::detail {

class CudaCapture;

class CudaStream final : public Stream, public TraceSource {
 public:
  /// Throws tessera::Error when CUDA cannot create the stream.
  CudaStream(Device* device, StreamRole role, std::string name, std::shared_ptr<CudaEventPool> events,
             std::shared_ptr<CudaTraceClock> clock);
  ~CudaStream() override;  // waits for what is queued, then destroys the stream

  /// `work` runs on a CUDA runtime thread and must make no CUDA calls (CUDA forbids it there).
  void enqueue_host(std::function<void()> work, std::string label = "work") override;
  void wait(const Event& e) override;
  void then(std::function<void()> callback) override;
  void retain(std::shared_ptr<const void> object) override;
  void* native_handle() const noexcept override { return stream_; }

  cudaStream_t cuda_stream() const noexcept { return stream_; }

  std::string capture_refusal(std::span<Stream* const> others) const override;
  std::unique_ptr<StreamCapture> begin_capture(std::span<Stream* const> others) override;
  void spoil_capture(const std::string& why) noexcept override;
  bool capturing() const noexcept override { return capture_.load(std::memory_order_acquire) != nullptr; }
  void note_replay_effect(FunctionRef<std::shared_ptr<ReplayEffect>()> make) override;
  /// Set by a CudaCapture while it records this stream (null otherwise): host functions and
  /// retained objects then belong to the recording.
  void attach_capture(CudaCapture* capture) noexcept;

  /// Where a timed piece of work began: empty when no trace was recording.
  struct TimingMark {
    std::shared_ptr<const CudaClockReference> reference;
    std::shared_ptr<void> begin;  // a timing event recorded on the stream
    explicit operator bool() const noexcept { return begin != nullptr; }
  };
  /// While a trace records, times the work enqueued between the two calls as one slice of the
  /// stream's track (CudaDevice's copies use them):
  ///
  ///   TimingMark m = stream.start_timing();
  ///   cudaMemcpyAsync(dst, src, n, kind, stream.cuda_stream());
  ///   stream.finish_timing(std::move(m), [&] { return std::string("copy h2d"); }, "copy");
  ///
  /// When no trace records, start_timing costs one load and finish_timing ignores the empty
  /// mark. Neither throws: a slice CUDA cannot time is left out, the work goes on.
  TimingMark start_timing() noexcept {
    if (!TraceSources::instance().recording()) return {};
    return start_timing_slow();
  }
  void finish_timing(TimingMark mark, FunctionRef<std::string()> label, const char* category) noexcept;

  void begin_span(std::string_view label) noexcept override;
  void end_span() noexcept override;

  std::string track_name() const override { return name(); }
  /// Slices whose events the GPU has passed; those still pending (work of no finished run) are
  /// dropped.
  void drain(std::vector<TraceEvent>& out) override;

 private:
  struct TimedWork {
    TimingMark mark;
    std::shared_ptr<void> end;
    std::string label;
    const char* category;
  };
  struct OpenSpan {
    std::thread::id thread;  // several threads may submit to one stream at once
    TimingMark mark;
    std::string label;
  };

  TimingMark start_timing_slow() noexcept;
  void record_into(std::shared_ptr<EventState> state) override;
  void drop_retained() noexcept override;
  /// Moves out the retained objects whose events are done (or all of them), in stream order.
  std::vector<std::shared_ptr<const void>> take_retained(bool all) noexcept;
  /// Enqueues `work` as a host function; exceptions it throws are logged, never passed to CUDA.
  void launch_host(std::function<void()> work, std::string label);

  cudaStream_t stream_ = nullptr;
  std::atomic<CudaCapture*> capture_{nullptr};
  std::shared_ptr<CudaEventPool> events_;
  struct Retained {
    std::shared_ptr<void> event;
    std::shared_ptr<const void> object;
  };
  std::mutex retained_mutex_;
  std::deque<Retained> retained_;
  std::shared_ptr<CudaTraceClock> clock_;
  std::mutex trace_mutex_;
  std::vector<TimedWork> timed_;
  std::vector<OpenSpan> open_spans_;
  std::atomic<std::size_t> open_span_count_{0};  // end_span's test without the lock

  // then() without a host function in the stream: an event recorded where the callback belongs,
  // waited on (asleep: blocking-sync events) by a thread of the stream's own, started by the
  // first then(). The GPU never waits for the host; TESSERA_CUDA_COMPLETION=host-function
  // brings back cudaLaunchHostFunc, for comparison (bench/memory).
  struct Completion {
    std::shared_ptr<void> event;
    std::function<void()> callback;
  };
  void run_completions() noexcept;
  /// Joins the completion thread once it has run every callback queued.
  void stop_completions() noexcept;
  std::shared_ptr<CudaEventPool> completion_events_;
  std::mutex completion_mutex_;
  std::condition_variable completion_ready_;
  std::condition_variable completions_idle_;
  std::deque<Completion> completions_;
  bool completion_running_ = false;  // a callback is running now
  bool completion_stop_ = false;
  std::thread completion_thread_;
};

}  // namespace tessera::detail
