#pragma once
// Streams and events: in-order queues of device work, and markers in them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tessera/core/function_ref.hpp"

namespace tessera {

class Device;
class StreamCapture;
class ReplayEffect;

namespace detail {
struct EventState;
}

/// Marks a point in a stream: ready once everything enqueued before it has run.
///
///   tessera::Event e = stream.record();
///   other.wait(e);      // device-side: `other` runs later work after e
///   e.synchronize();    // host-side: block until e is ready
class Event {
public:
  Event();  ///< an event that is already ready
  bool ready() const noexcept;
  void synchronize() const;

private:
  friend class Stream;
  explicit Event(std::shared_ptr<detail::EventState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::EventState> state_;
};

enum class StreamRole : std::uint8_t { compute, copy_host_to_device, copy_device_to_host, copy_device_to_device };

/// An in-order queue of work on one device. Everything enqueued runs in order; different
/// streams run concurrently. Thread safe: any thread may enqueue.
class Stream {
public:
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device& device() const noexcept { return *device_; }
  StreamRole role() const noexcept { return role_; }
  /// "sim:1/compute0", "cuda:0/h2d".
  const std::string& name() const noexcept { return name_; }

  /// Runs `work` on the host in stream order. On a sim device this is how kernels run (the
  /// stream's own thread executes them); on CUDA it is a host function between kernels.
  /// `label` names the work in traces.
  virtual void enqueue_host(std::function<void()> work, std::string label = "work") = 0;
  /// As enqueue_host, then calls `took` in stream order with the time the device spent on the
  /// work: its clock, not the host's where the two differ (a simulated device with a compute
  /// speed reports its modelled time, which the host's other threads do not stretch). How
  /// balancers measure a device. `took` runs on a host thread of the stream's and must not throw.
  virtual void enqueue_host_timed(std::function<void()> work, std::string label,
                                  std::function<void(std::chrono::nanoseconds)> took);
  /// An event that becomes ready when the stream reaches this point.
  Event record();
  /// Later work on this stream waits for `e` (on the device; the host does not block).
  virtual void wait(const Event& e) = 0;
  /// Calls `callback` on some host thread once the stream reaches this point. It must not
  /// enqueue work on streams (CUDA forbids it in stream callbacks); firing an AsyncDone is fine.
  virtual void then(std::function<void()> callback) = 0;
  /// Keeps `object` alive until the stream has passed this point (memory that queued work uses,
  /// say). The default is a then() callback that drops it; CUDA streams instead keep it with an
  /// event and drop it at a later call once the event is done, so no host function stalls the
  /// stream. Either way it is dropped by synchronize() at the latest.
  virtual void retain(std::shared_ptr<const void> object) {
    then([o = std::move(object)] {});
  }
  /// Blocks the calling thread until everything enqueued so far has run.
  void synchronize() {
    record().synchronize();
    drop_retained();
  }
  /// The backend's own queue, for launching kernels in stream order: a cudaStream_t on a CUDA
  /// device, nullptr on the host and sim devices (they run kernels through enqueue_host). Launch
  /// from a thread whose current CUDA device is this stream's device.
  ///
  ///   auto cs = static_cast<cudaStream_t>(stream.native_handle());
  ///   scale<<<blocks, 256, 0, cs>>>(n, data);
  virtual void* native_handle() const noexcept { return nullptr; }
  /// Bracket what is enqueued between the two calls as one slice `label` of the stream's track
  /// in executor traces; tessera::submit calls them around labelled work. Hooks, because only
  /// the backend can time its own queue, and kernels launched through native_handle() pass the
  /// stream by: a CUDA stream records timing events here, while host and sim streams, which
  /// time each item they run, keep these no-ops. Never throw: tracing must not fail the work.
  virtual void begin_span(std::string_view /*label*/) noexcept {}
  virtual void end_span() noexcept {}

  /// Why work on this stream and `others` cannot be captured together (begin_capture), or an
  /// empty string when it can. Asked before capturing, so work is never half recorded.
  virtual std::string capture_refusal(std::span<Stream* const> others) const;
  /// Begins recording, instead of running, the work enqueued on this stream and on `others` (see
  /// device/capture.hpp); the recording launches on this stream. Throws tessera::Error when
  /// capture_refusal() is not empty.
  virtual std::unique_ptr<StreamCapture> begin_capture(std::span<Stream* const> others);
  /// Says, while this stream records for a capture, that what was just enqueued depends on state
  /// that a replay would not see (the memory layer copying stale rows in first): the recording
  /// then runs once and is not replayed (StreamCapture::spoiled). Nothing when not recording.
  virtual void spoil_capture(const std::string& /*why*/) noexcept {}
  /// Whether work enqueued on this stream now is recorded for a capture rather than run.
  virtual bool capturing() const noexcept { return false; }
  /// While this stream records for a capture: keeps `make()`'s effect with the recording, to be
  /// redone after each replay (ReplayEffect). Nothing (and no call of `make`) when not recording.
  virtual void note_replay_effect(FunctionRef<std::shared_ptr<ReplayEffect>()> /*make*/) {}

 protected:
  Stream(Device* device, StreamRole role, std::string name) : device_(device), role_(role), name_(std::move(name)) {}
  /// Backends make `state` ready when the stream reaches the point of the call.
  virtual void record_into(std::shared_ptr<detail::EventState> state) = 0;
  static void make_ready(detail::EventState& state);
  static bool wait_ready(const Event& e) noexcept;  // is it ready now
  static std::shared_ptr<detail::EventState> state_of(const Event& e) { return e.state_; }
  /// Drops what retain() kept whose point the stream has passed (called after a synchronize).
  virtual void drop_retained() noexcept {}

private:
  Device* device_;
  StreamRole role_;
  std::string name_;
};

}  // namespace tessera
