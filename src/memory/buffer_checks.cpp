// The checks of Buffer's entry points, with messages that name the buffer, the call, the
// values, and what to do.
#include "buffer_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>

namespace tessera::detail {

namespace {

bool conflict(Access a, Access b) { return access_writes(a) || access_writes(b); }

}  // namespace

std::string BufferState::describe(const Call& c) const {
  std::string out = std::string(c.what) + "(" + std::string(to_string(c.mode)) + ", rows " + c.rows.to_string() + ")";
  if (c.stream != nullptr) out += " on " + core->space_name(c.space) + " (stream " + c.stream->name() + ")";
  return out;
}

void BufferState::check_space(std::size_t space, const char* what) const {
  if (space < replicas.size()) return;
  throw Error("Buffer '" + name + "': " + what + " was given space " + std::to_string(space) +
              ", which does not exist: the memory manager has spaces 0 (host) to " +
              std::to_string(replicas.size() - 1) + " (" + core->space_name(replicas.size() - 1) +
              "); space i is devices.accelerator(i - 1), or use MemoryManager::space_of(device)");
}

void BufferState::check_rows(const Call& c) const {
  const RowRange r = c.rows;
  if (r.begin < r.end && r.end <= rows) return;
  const std::string why = r.begin > r.end ? "it ends before it begins"
                          : r.empty()     ? "it is empty"
                                          : "it goes past the last row";
  throw Error("Buffer '" + name + "': " + describe(c) + ": the rows " + r.to_string() + " are not a range of rows [0," +
              std::to_string(rows) + ") (" + why +
              "); pass a non-empty {begin, end} with end <= " + std::to_string(rows));
}

void BufferState::check_stream(const Call& c) const {
  const Device& expected = core->device(c.space);
  const Stream& stream = *c.stream;
  if (&stream.device() == &expected) return;
  std::string hint;
  try {
    hint = ", or name space " + std::to_string(core->space_of(stream.device())) + " for " + stream.device().name();
  } catch (const Error&) {
    hint = " (" + stream.device().name() + " is not a device of this memory manager)";
  }
  throw Error("Buffer '" + name + "': " + describe(c) + " was given stream " + stream.name() + " of " +
              stream.device().name() + ", but space " + std::to_string(c.space) + " is " + expected.name() +
              "; pass a stream of " + expected.name() + hint);
}

void BufferState::check_conflicts(const Call& c) const {
  for (const AccessInFlight& a : in_flight_) {
    if (!a.rows.overlaps(c.rows) || !conflict(a.mode, c.mode)) continue;
    throw Error("Buffer '" + name + "': " + describe(c) + " conflicts with " +
                describe({"prepare", a.space, a.stream, a.mode, a.rows}) +
                ", which has not been finished; accesses to overlapping rows where one writes must be ordered: "
                "call finish on the first (and order the two nodes in the graph) before the second");
  }
  for (const HostHold& h : holds_)
    if (h.rows.overlaps(c.rows) && conflict(h.mode, c.mode))
      throw Error("Buffer '" + name + "': " + describe(c) + " conflicts with the host's request(" +
                  std::string(to_string(h.mode)) + ", rows " + h.rows.to_string() +
                  "), which has not been released; host readers may share rows, a writer needs them alone: call "
                  "release() once the host is done with the rows");
}

void BufferState::check_written(const Call& c) const {
  // Validity only ever moves between replicas (a write elsewhere, a write-back), so rows no
  // replica holds were never written.
  for (const Replica& replica : replicas)
    if (replica.valid.contains(c.rows)) return;
  RowRanges anywhere;
  for (const Replica& replica : replicas) anywhere.add(replica.valid);
  const RowRanges never = anywhere.missing(c.rows);
  if (never.empty()) return;
  throw Error("Buffer '" + name + "': " + describe(c) + " reads rows " + never.to_string() +
              " that were never written (no replica holds them); write them first with Access::write (a kernel, or "
              "request(Access::write) on the host)");
}

}  // namespace tessera::detail
