#include "trace_sources.hpp"

#include <algorithm>

namespace tessera::detail {

TraceSources& TraceSources::instance() {
  static TraceSources sources;
  return sources;
}

void TraceSources::add(TraceSource* s) {
  std::lock_guard lock(mutex_);
  sources_.push_back(s);
}

void TraceSources::remove(TraceSource* s) {
  std::lock_guard lock(mutex_);
  std::erase(sources_, s);
}

std::uint64_t TraceSources::now_ns() const noexcept {
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const std::int64_t d = now - origin_ns_.load(std::memory_order_relaxed);
  return d > 0 ? static_cast<std::uint64_t>(d) : 0;
}

void TraceSources::begin_recording(std::chrono::steady_clock::time_point origin) {
  origin_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch()).count(),
                   std::memory_order_relaxed);
  std::vector<TraceEvent> stale;
  std::lock_guard lock(mutex_);
  for (TraceSource* s : sources_) s->drain(stale);  // drop what a previous trace left behind
  recorders_.fetch_add(1, std::memory_order_relaxed);
}

void TraceSources::end_recording(Trace& into) {
  std::lock_guard lock(mutex_);
  recorders_.fetch_sub(1, std::memory_order_relaxed);
  for (TraceSource* s : sources_) {
    std::vector<TraceEvent> events;
    s->drain(events);
    if (events.empty()) continue;
    const std::uint32_t track = into.add_track(s->track_name());
    for (auto& e : events) {
      e.track = track;
      into.events.push_back(std::move(e));
    }
  }
}

}  // namespace tessera::detail
