#pragma once
// A stream of a simulated device: one thread that runs its queue in order. While an executor
// records a trace, the stream times each piece of work into a track of its own. A compute
// stream of a slower simulated device holds each piece of enqueued work's end back, so that it
// takes `slowdown` times the CPU time it really took (event records, waits and callbacks do not).

#include "../../core/trace_sources.hpp"

#include <atomic>
#include <tessera/device/stream.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::detail {

class SimCapture;

class SimStream final : public Stream, public TraceSource {
public:
  /// `slowdown` 0: no compute model; else each piece of work takes that many times its CPU time.
  SimStream(Device* device, StreamRole role, std::string name, double slowdown = 0.0);
  ~SimStream() override;  // runs what is queued, then stops

  void enqueue_host(std::function<void()> work, std::string label = "work") override;
  /// A copy between memories: never slowed by the compute model (copies have their own) and
  /// traced as a copy.
  void enqueue_copy(std::function<void()> work, std::string label);
  /// Reports the modelled time (CPU time x slowdown) where the device has a compute speed.
  void enqueue_host_timed(std::function<void()> work, std::string label,
                          std::function<void(std::chrono::nanoseconds)> took) override;
  void wait(const Event& e) override;
  void then(std::function<void()> callback) override;

  std::string capture_refusal(std::span<Stream* const> others) const override;
  std::unique_ptr<StreamCapture> begin_capture(std::span<Stream* const> others) override;
  void spoil_capture(const std::string& why) noexcept override;
  bool capturing() const noexcept override { return capturing_.load(std::memory_order_acquire); }
  void note_replay_effect(FunctionRef<std::shared_ptr<ReplayEffect>()> make) override;

  std::string track_name() const override { return name(); }
  void drain(std::vector<TraceEvent>& out) override;

  struct Item {
    std::function<void()> work;
    std::string label;
    bool modelled = false;  // enqueued work, slowed by the compute model
    bool copy = false;
    std::function<void(std::chrono::nanoseconds)> took;  // told the device's time for the work
  };

private:
  friend class SimCapture;
  friend class SimCapturedWork;

  void push(Item item);
  /// Runs one item on the stream's thread: traced, timed, slowed by the compute model. Returns
  /// what it threw: the queue logs it, a replay reports it under the node that recorded it.
  std::exception_ptr execute(const Item& item);

  void record_into(std::shared_ptr<EventState> state) override;
  void run();

  std::mutex mutex_;
  std::condition_variable has_work_;
  std::deque<Item> queue_;
  SimCapture* capture_ = nullptr;  // set while a capture records this stream's work (under mutex_)
  // capture_ != nullptr, readable without mutex_: the memory layer asks on every access.
  std::atomic<bool> capturing_{false};
  /// Sets capture_ (with mutex_ held).
  void set_capture(SimCapture* c) noexcept {
    capture_ = c;
    capturing_.store(c != nullptr, std::memory_order_release);
  }
  bool stopping_ = false;
  std::mutex trace_mutex_;
  std::vector<TraceEvent> trace_events_;
  double slowdown_;
  std::thread thread_;
};

}  // namespace tessera::detail
