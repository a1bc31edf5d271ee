#pragma once
// Things other than workers that put tracks into an executor's trace: device streams. They
// register here for their lifetime; while any executor records, they time their work, and
// stop_trace() drains them into tracks of their own.

#include <tessera/core/trace.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

class TraceSource {
public:
  virtual ~TraceSource() = default;
  virtual std::string track_name() const = 0;
  /// Moves the recorded events (track left unset) into `out`.
  virtual void drain(std::vector<TraceEvent>& out) = 0;
};

class TraceSources {
public:
  static TraceSources& instance();

  void add(TraceSource* s);
  void remove(TraceSource* s);

  /// Whether some executor is recording; sources check it before timing anything.
  bool recording() const noexcept { return recorders_.load(std::memory_order_relaxed) > 0; }
  /// Nanoseconds since the trace began, for a source's timestamps.
  std::uint64_t now_ns() const noexcept;

  void begin_recording(std::chrono::steady_clock::time_point origin);
  /// Adds a track per source that recorded something, with its events.
  void end_recording(Trace& into);

private:
  std::mutex mutex_;
  std::vector<TraceSource*> sources_;
  std::atomic<int> recorders_{0};
  std::atomic<std::int64_t> origin_ns_{0};
};

}  // namespace tessera::detail
