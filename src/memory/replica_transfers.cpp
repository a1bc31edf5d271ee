// Replicas: allocation, the copies that make rows valid, the events that order them, and
// eviction. Each copy moves one contiguous run of rows, so partial validity saves bytes.
#include "buffer_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/memory/bytes.hpp>

#include <algorithm>

namespace tessera::detail {

void BufferState::ensure_replica(std::size_t space) {
  Replica& replica = replicas[space];
  if (replica.data != nullptr) return;
  if (space != 0) {
    replica.data = static_cast<std::byte*>(core->place(*this, space));
    return;
  }
  // Pinned memory, where the first accelerator has a pool of it, so copies run at full speed
  // and truly asynchronously; ordinary host memory otherwise.
  void* p = core->num_spaces() > 1 ? core->device(1).try_allocate_pinned_host(bytes) : nullptr;
  replica.pinned = p != nullptr;
  if (p == nullptr) {
    try {
      p = core->device(0).allocate(bytes);
    } catch (const Error& e) {
      throw Error("Buffer '" + name + "': cannot allocate its host replica of " + format_bytes(bytes) + ": " +
                  e.what());
    }
  }
  replica.data = static_cast<std::byte*>(p);
}

void BufferState::free_replica(std::size_t space) {
  Replica& replica = replicas[space];
  if (replica.data == nullptr) return;
  if (space == 0 && replica.pinned)
    core->device(1).deallocate_pinned_host(replica.data, bytes);
  else
    core->device(space).deallocate(replica.data, bytes);
  if (space != 0) core->unlink(*this, space);
  replica.data = nullptr;
  replica.pinned = false;
  replica.valid.clear();
  replica.pending.clear();
}

std::vector<std::size_t> BufferState::sources_for(std::size_t space) const {
  // A device prefers a device of its own kind (a direct copy that leaves the host link free),
  // then the host, then devices of another kind (staged through the host).
  std::vector<std::size_t> order;
  if (space == 0) {
    for (std::size_t s = 1; s < replicas.size(); ++s) order.push_back(s);
    return order;
  }
  const DeviceKind kind = core->device(space).kind();
  for (std::size_t s = 1; s < replicas.size(); ++s)
    if (s != space && core->device(s).kind() == kind) order.push_back(s);
  order.push_back(0);
  for (std::size_t s = 1; s < replicas.size(); ++s)
    if (core->device(s).kind() != kind) order.push_back(s);
  return order;
}

void BufferState::make_valid(std::size_t space, RowRange r) {
  RowRanges need = replicas[space].valid.missing(r);
  for (std::size_t source : sources_for(space)) {
    if (need.empty()) return;
    for (RowRange run : need)
      for (RowRange piece : replicas[source].valid.intersection(run)) transfer(source, space, piece);
    need = replicas[space].valid.missing(r);
  }
  if (!need.empty())  // check_written ran first, so this is a bug in the bookkeeping
    throw Error("Buffer '" + name + "': internal error: rows " + need.to_string() + " are valid nowhere after " +
                "the check that they were written; please report this with the sequence of accesses");
}

void BufferState::transfer(std::size_t from, std::size_t to, RowRange r) {
  if (from != 0 && to != 0 && core->device(from).kind() != core->device(to).kind()) {
    ensure_replica(0);
    copy(from, 0, r);
    copy(0, to, r);
    return;
  }
  copy(from, to, r);
}

bool BufferState::settled(const PendingWork& w) {
  // An event recorded while its stream records for a capture reads as ready (so that a stray
  // wait on it cannot hang), but the work it stands for has not run: keep it while recording.
  return w.done.ready() && !w.stream->capturing();
}

bool BufferState::written_by_recording(const Replica& replica, RowRange r) const {
  return std::any_of(replica.pending.begin(), replica.pending.end(),
                     [&](const PendingWork& w) { return w.writes && w.rows.overlaps(r) && w.stream->capturing(); });
}

void BufferState::copy(std::size_t from, std::size_t to, RowRange r) {
  Replica& src = replicas[from];
  Replica& dst = replicas[to];
  const CopyDirection direction = copy_direction(from, to);
  // The device end runs the copy; between devices, the source's d2d stream (a peer copy). Rows
  // that work being recorded writes are not written yet: their copy joins the recording, after
  // that work, on the stream that records the work reading them.
  const bool in_recording = recording_ != nullptr && written_by_recording(src, r);
  Device& device = in_recording ? recording_->device() : core->device(from == 0 ? to : from);
  Stream& stream = in_recording ? *recording_ : device.copy_stream(direction);
  wait_for(stream, src, r, false);
  wait_for(stream, dst, r, true);
  const std::size_t offset = r.begin * row_bytes, n = r.size() * row_bytes;
  device.copy_async(dst.data + offset, src.data + offset, n, direction, stream);
  copied(from, to, stream, r);
  if (in_recording) {
    recorded_copy_bytes_ += n;
    stream.note_replay_effect([&]() -> std::shared_ptr<ReplayEffect> {
      return std::make_shared<CopyReplay>(shared_from_this(), from, to, src.data, dst.data, r);
    });
  }
}

void BufferState::copied(std::size_t from, std::size_t to, Stream& stream, RowRange r) {
  const Event done = stream.record();
  record(replicas[from], r, done, &stream, false);
  record(replicas[to], r, done, &stream, true);
  replicas[to].valid.add(r);
  keep_alive_until(stream);
  const CopyDirection direction = copy_direction(from, to);
  const std::size_t moved = r.size() * row_bytes;
  (direction == CopyDirection::host_to_device   ? transferred_.host_to_device
   : direction == CopyDirection::device_to_host ? transferred_.device_to_host
                                                : transferred_.device_to_device) += moved;
  core->count_transfer(direction, moved);
}

void BufferState::wait_for(Stream& stream, Replica& replica, RowRange r, bool include_reads) {
  std::erase_if(replica.pending, [](const PendingWork& w) { return settled(w); });
  // Work on one stream runs in order, so the last conflicting event of each other stream covers
  // the earlier ones, and work on `stream` itself needs no wait at all.
  std::vector<const PendingWork*> last_per_stream;
  for (const PendingWork& w : replica.pending) {
    if (w.stream == &stream || !w.rows.overlaps(r) || !(w.writes || include_reads)) continue;
    auto same = std::find_if(last_per_stream.begin(), last_per_stream.end(),
                             [&](const PendingWork* p) { return p->stream == w.stream; });
    if (same != last_per_stream.end())
      *same = &w;
    else
      last_per_stream.push_back(&w);
  }
  for (const PendingWork* w : last_per_stream) stream.wait(w->done);
}

void BufferState::record(Replica& replica, RowRange r, const Event& done, Stream* stream, bool writes) {
  // A write waited for all earlier work on its rows, so that work needs no entry of its own.
  if (writes) std::erase_if(replica.pending, [&](const PendingWork& w) { return r.contains(w.rows); });
  replica.pending.push_back({r, done, stream, writes});
}

void BufferState::keep_alive_until(Stream& stream) {
  stream.retain(shared_from_this());
}

std::size_t BufferState::evict(std::size_t space) {
  Replica& replica = replicas[space];
  RowRanges only_here = replica.valid;
  for (std::size_t other = 0; other < replicas.size(); ++other)
    if (other != space) only_here.subtract(replicas[other].valid);
  std::size_t written_back = 0;
  if (!only_here.empty()) {
    ensure_replica(0);
    for (RowRange run : only_here) {
      copy(space, 0, run);
      written_back += run.size() * row_bytes;
    }
  }
  // The memory goes back to the pool for reuse at once, so everything still reading or writing
  // it (the write-back included) must have run: the one place the memory layer blocks on events.
  for (const PendingWork& w : replica.pending) w.done.synchronize();
  free_replica(space);
  return written_back;
}

}  // namespace tessera::detail
