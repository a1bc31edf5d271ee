// Decision marks: one trace source per named track, made on first use and kept for the process.
#include "trace_sources.hpp"

#include <tessera/core/trace.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace tessera {
namespace {

class MarkTrack final : public detail::TraceSource {
 public:
  explicit MarkTrack(std::string name) : name_(std::move(name)) {}
  std::string track_name() const override { return name_; }
  void drain(std::vector<TraceEvent>& out) override {
    std::lock_guard lock(mutex_);
    for (auto& e : events_) out.push_back(std::move(e));
    events_.clear();
  }
  void add(std::string what, std::uint64_t at) {
    std::lock_guard lock(mutex_);
    events_.push_back(TraceEvent{std::move(what), "decision", 0, at, at});
  }

 private:
  std::string name_;
  std::mutex mutex_;
  std::vector<TraceEvent> events_;
};

class MarkTracks {
 public:
  // TraceSources is made first, so it outlives the tracks registered with it.
  MarkTracks() : sources_(detail::TraceSources::instance()) {}
  ~MarkTracks() {
    for (auto& [name, track] : tracks_) sources_.remove(track.get());
  }
  MarkTrack& track(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto& t = tracks_[name];
    if (!t) {
      t = std::make_unique<MarkTrack>(name);
      sources_.add(t.get());
    }
    return *t;
  }

 private:
  detail::TraceSources& sources_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<MarkTrack>> tracks_;
};

}  // namespace

void trace_mark(const std::string& track, std::string what) {
  auto& sources = detail::TraceSources::instance();
  if (!sources.recording()) return;
  static MarkTracks tracks;
  tracks.track(track).add(std::move(what), sources.now_ns());
}

}  // namespace tessera
