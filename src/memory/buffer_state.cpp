// Buffer accesses: device-side prepare/finish, host request/release, and the bookkeeping that
// makes later accesses follow earlier ones. Validity changes in call order; the copies and
// kernels it stands for run asynchronously, ordered by events.
#include "buffer_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>

#include <algorithm>

namespace tessera::detail {

BufferState::BufferState(std::shared_ptr<MemoryCore> c, std::size_t n, std::size_t bytes_per_row, std::string label)
    : core(std::move(c)),
      name(std::move(label)),
      rows(n),
      row_bytes(bytes_per_row),
      bytes(n * bytes_per_row),
      replicas(core->num_spaces()) {}

BufferState::~BufferState() {
  // Every copy and access that used a replica held a reference until its stream passed it, so
  // nothing runs on these replicas any more.
  for (std::size_t space = 0; space < replicas.size(); ++space) free_replica(space);
}

void* BufferState::prepare(std::size_t space, Stream& stream, Access mode, RowRange r) {
  std::lock_guard lock(mutex);
  check_space(space, "prepare");
  const Call call{"prepare", space, &stream, mode, r};
  check_rows(call);
  check_stream(call);
  check_conflicts(call);
  if (access_reads(mode)) check_written(call);

  if (space != 0) host_sole_.store(nullptr, std::memory_order_relaxed);
  ensure_replica(space);
  if (space != 0) core->touch(*this, space);
  if (access_reads(mode)) {
    const std::size_t copied = transferred_.total(), recorded = recorded_copy_bytes_;
    recording_ = stream.capturing() ? &stream : nullptr;
    struct Reset {
      Stream*& recording;
      ~Reset() { recording = nullptr; }
    } reset{recording_};
    make_valid(space, r);
    // Copies chosen by this run's state: a recording of the work must not replay them blindly.
    // (Copies of rows that recorded work wrote joined the recording: they replay with it.)
    if (transferred_.total() - copied != recorded_copy_bytes_ - recorded)
      stream.spoil_capture("buffer '" + name + "' had rows " + std::to_string(r.begin) + "-" + std::to_string(r.end) +
                           " copied in for work on " + stream.name() +
                           " (its data was written elsewhere since the last run)");
  }
  Replica& replica = replicas[space];
  // The copies just enqueued are pending writes of this replica, so the kernel waits for them.
  wait_for(stream, replica, r, access_writes(mode));
  in_flight_.push_back({space, &stream, mode, r});
  return replica.data;
}

void BufferState::finish(std::size_t space, Stream& stream, Access mode, RowRange r) {
  std::lock_guard lock(mutex);
  check_space(space, "finish");
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [&](const AccessInFlight& a) {
    return a.space == space && a.stream == &stream && a.mode == mode && a.rows == r;
  });
  if (it == in_flight_.end()) {
    std::string open;
    for (const AccessInFlight& a : in_flight_)
      open += (open.empty() ? "" : "; ") + describe({"prepare", a.space, a.stream, a.mode, a.rows});
    throw Error("Buffer '" + name + "': " + describe({"finish", space, &stream, mode, r}) +
                " matches no access in flight (" + (open.empty() ? std::string("none is") : "in flight: " + open) +
                "); call finish once per prepare, with the same space, stream, mode and rows");
  }
  in_flight_.erase(it);
  ended(space, stream, mode, r);
  // A recording of this work redoes the above at each replay, which calls neither prepare nor
  // finish.
  stream.note_replay_effect([&]() -> std::shared_ptr<ReplayEffect> {
    return std::make_shared<AccessReplay>(shared_from_this(), space, replicas[space].data, mode, r);
  });
}

void BufferState::ended(std::size_t space, Stream& stream, Access mode, RowRange r) {
  const Event done = stream.record();
  Replica& replica = replicas[space];
  if (access_writes(mode)) {
    replica.valid.add(r);
    for (std::size_t other = 0; other < replicas.size(); ++other)
      if (other != space) replicas[other].valid.subtract(r);
  }
  record(replica, r, done, &stream, access_writes(mode));
  keep_alive_until(stream);
  if (space == 0 && access_writes(mode)) note_host_write_ended(r);
}

std::vector<RowRanges>& BufferState::replay_validity(ReplayCheck& check) const {
  return check.scratch<std::vector<RowRanges>>(this, [this] {
    std::vector<RowRanges> valid;
    valid.reserve(replicas.size());
    for (const Replica& replica : replicas) valid.push_back(replica.valid);
    return valid;
  });
}

bool BufferState::replayable(ReplayCheck& check, std::size_t space, const std::byte* data, Access mode,
                             RowRange r) const {
  std::lock_guard lock(mutex);
  if (replicas[space].data != data) return false;  // evicted since (and perhaps placed anew)
  std::vector<RowRanges>& valid = replay_validity(check);
  if (access_reads(mode) && !valid[space].contains(r)) return false;
  if (access_writes(mode)) {
    valid[space].add(r);
    for (std::size_t other = 0; other < valid.size(); ++other)
      if (other != space) valid[other].subtract(r);
  }
  return true;
}

bool BufferState::copy_replayable(ReplayCheck& check, std::size_t from, std::size_t to, const std::byte* source,
                                  const std::byte* target, RowRange r) const {
  std::lock_guard lock(mutex);
  if (replicas[from].data != source || replicas[to].data != target) return false;
  std::vector<RowRanges>& valid = replay_validity(check);
  if (!valid[from].contains(r)) return false;
  valid[to].add(r);
  return true;
}

void BufferState::copy_replayed(std::size_t from, std::size_t to, Stream& stream, RowRange r) {
  std::lock_guard lock(mutex);
  if (to != 0) host_sole_.store(nullptr, std::memory_order_relaxed);
  copied(from, to, stream, r);  // the replay moved the bytes again
}

void BufferState::replayed(std::size_t space, Stream& stream, Access mode, RowRange r) {
  std::lock_guard lock(mutex);
  if (space != 0) host_sole_.store(nullptr, std::memory_order_relaxed);
  ended(space, stream, mode, r);
}

AccessReplay::AccessReplay(std::shared_ptr<BufferState> state, std::size_t space, const std::byte* data, Access mode,
                           RowRange rows)
    : state_(std::move(state)), space_(space), data_(data), mode_(mode), rows_(rows) {}

bool AccessReplay::ready(ReplayCheck& check) const { return state_->replayable(check, space_, data_, mode_, rows_); }

void AccessReplay::replayed(Stream& origin) { state_->replayed(space_, origin, mode_, rows_); }

CopyReplay::CopyReplay(std::shared_ptr<BufferState> state, std::size_t from, std::size_t to, const std::byte* source,
                       const std::byte* target, RowRange rows)
    : state_(std::move(state)), from_(from), to_(to), source_(source), target_(target), rows_(rows) {}

bool CopyReplay::ready(ReplayCheck& check) const {
  return state_->copy_replayable(check, from_, to_, source_, target_, rows_);
}

void CopyReplay::replayed(Stream& origin) { state_->copy_replayed(from_, to_, origin, rows_); }

void BufferState::note_host_write_ended(RowRange r) {
  if (r.begin != 0 || r.end != rows || !in_flight_.empty() || !holds_.empty()) return;
  for (std::size_t other = 1; other < replicas.size(); ++other)
    if (!replicas[other].valid.empty()) return;
  host_sole_.store(replicas[0].data, std::memory_order_release);
}

std::future<void*> BufferState::request(Access mode, RowRange r) {
  std::lock_guard lock(mutex);
  const Call call{"request", 0, nullptr, mode, r};
  check_rows(call);
  check_conflicts(call);
  if (access_reads(mode)) check_written(call);

  host_sole_.store(nullptr, std::memory_order_relaxed);
  ensure_replica(0);
  if (access_reads(mode)) make_valid(0, r);
  Replica& host = replicas[0];

  // The host may touch the rows once the stream work writing them (copies in) has run, and,
  // when it writes, once the work reading them (copies out) has too.
  std::erase_if(host.pending, [](const PendingWork& w) { return settled(w); });
  std::vector<const PendingWork*> before;
  for (const PendingWork& w : host.pending)
    if (w.rows.overlaps(r) && (w.writes || access_writes(mode))) before.push_back(&w);

  if (access_writes(mode)) {
    host.valid.add(r);
    for (std::size_t other = 1; other < replicas.size(); ++other) replicas[other].valid.subtract(r);
  }
  holds_.push_back(HostHold{mode, r});

  auto promise = std::make_shared<std::promise<void*>>();
  std::future<void*> future = promise->get_future();
  void* base = host.data;
  if (before.empty()) {
    promise->set_value(base);
  } else {
    core->count_host_wait();
    // One stream waits (on the device) for the others, then fulfils the promise from its callback,
    // so the host thread never blocks here.
    Stream& last = *before.back()->stream;
    for (const PendingWork* w : before)
      if (w->stream != &last) last.wait(w->done);
    last.then([promise, base] { promise->set_value(base); });
  }
  return future;
}

void BufferState::release() {
  std::lock_guard lock(mutex);
  if (holds_.size() == 1) {
    const HostHold ended = holds_.front();
    holds_.clear();
    if (access_writes(ended.mode)) note_host_write_ended(ended.rows);
    return;
  }
  if (holds_.empty())
    throw Error("Buffer '" + name +
                "': release() without a host hold; call request(mode, rows) first, and release() once per request");
  std::string held;
  for (const HostHold& h : holds_)
    held += (held.empty() ? "" : ", ") + std::string(to_string(h.mode)) + " rows " + h.rows.to_string();
  throw Error("Buffer '" + name + "': release() while the host holds several requests (" + held +
              "); name the one to end with release(mode, rows)");
}

void BufferState::release(Access mode, RowRange r) {
  std::lock_guard lock(mutex);
  auto it = std::find(holds_.begin(), holds_.end(), HostHold{mode, r});
  if (it == holds_.end())
    throw Error("Buffer '" + name + "': release(" + std::string(to_string(mode)) + ", rows " + r.to_string() +
                ") matches no host hold (" + std::to_string(holds_.size()) +
                " held); release once per request, with the mode and rows given to request");
  holds_.erase(it);
  if (access_writes(mode)) note_host_write_ended(r);
}

RowRanges BufferState::valid_rows(std::size_t space) const {
  std::lock_guard lock(mutex);
  check_space(space, "valid_rows");
  return replicas[space].valid;
}

bool BufferState::has_replica(std::size_t space) const {
  std::lock_guard lock(mutex);
  check_space(space, "has_replica");
  return replicas[space].data != nullptr;
}

TransferStats BufferState::transferred() const {
  std::lock_guard lock(mutex);
  return transferred_;
}

bool BufferState::evictable(std::size_t space) const {
  if (!holds_.empty()) return false;
  return std::none_of(in_flight_.begin(), in_flight_.end(), [&](const AccessInFlight& a) { return a.space == space; });
}

}  // namespace tessera::detail
