#pragma once
// A recorded execution trace, written as Chrome trace-event JSON that Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one track per worker, one slice per node run.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera {

struct TraceEvent {
  std::string name;
  std::string category;  ///< "cpu", "gpu", "loop", ...
  std::uint32_t track = 0;
  std::uint64_t begin_ns = 0;  ///< since the trace started
  std::uint64_t end_ns = 0;
};

/// What `Executor::stop_trace()` returns.
///
///   ex.start_trace();
///   ex.run(graph).get();
///   ex.stop_trace().save("run.trace.json");   // open in ui.perfetto.dev
class Trace {
public:
  std::vector<std::string> tracks;  ///< a name per track: "worker 0 (gpu)", ...
  std::vector<TraceEvent> events;

  /// Adds a track (a device stream, a caller thread) and returns its index.
  std::uint32_t add_track(std::string name);

  void write_chrome_json(std::ostream& out) const;
  /// Writes the JSON to `path`; throws tessera::Error when the file cannot be written.
  void save(const std::string& path) const;
};

/// Marks a decision (a balancer's split, a tile height) as an instant named `what` on the track
/// `track` of every trace being recorded (Executor::start_trace). Costs an atomic load when no
/// trace is.
///
///   tessera::trace_mark("loops balance", "jacobi: host 120 rows, sim:0 904 rows");
void trace_mark(const std::string& track, std::string what);

}  // namespace tessera
