#pragma once
// What a Buffer handle points to: the replicas, their validity, the work in flight on them, and
// the rules that keep them coherent. Shared by every handle and by every transfer or access in
// flight (a stream callback holds a reference until the stream has passed the work), so the
// memory outlives whatever still uses it.

#include "memory_core.hpp"

#include <atomic>
#include <tessera/device/capture.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/memory/access.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

/// Work on a stream that reads or writes some rows of a replica and may not have run yet.
/// Later work that conflicts with it waits for `done` on the device.
struct PendingWork {
  RowRange rows;
  Event done;
  Stream* stream;
  bool writes;
};

struct Replica {
  std::byte* data = nullptr;
  bool pinned = false;  // a host replica from the first accelerator's pinned pool
  RowRanges valid;
  std::vector<PendingWork> pending;  // in record order
  LruList::iterator lru{};           // device replicas only; guarded by MemoryCore's mutex
};

/// An access between prepare and finish.
struct AccessInFlight {
  std::size_t space;
  Stream* stream;
  Access mode;
  RowRange rows;
};

struct HostHold {
  Access mode;
  RowRange rows;
  bool operator==(const HostHold&) const = default;
};

class BufferState : public std::enable_shared_from_this<BufferState> {
 public:
  BufferState(std::shared_ptr<MemoryCore> core, std::size_t rows, std::size_t row_bytes, std::string name);
  ~BufferState();
  BufferState(const BufferState&) = delete;
  BufferState& operator=(const BufferState&) = delete;

  // The bodies of Buffer's members; each takes the mutex.
  void* prepare(std::size_t space, Stream& stream, Access mode, RowRange rows);
  void finish(std::size_t space, Stream& stream, Access mode, RowRange rows);
  std::future<void*> request(Access mode, RowRange rows);
  void release();
  void release(Access mode, RowRange rows);
  RowRanges valid_rows(std::size_t space) const;
  bool has_replica(std::size_t space) const;
  TransferStats transferred() const;
  /// Buffer::host_if_sole.
  void* host_if_sole() const noexcept { return host_sole_.load(std::memory_order_acquire); }

  /// Whether work recorded with an access to `r` of the replica in `space` (at `data` then) may be
  /// replayed: the replica is still there and, when the access reads, will hold every row of `r`
  /// by then (valid now, or written or copied in by the effects `check` has seen before it).
  bool replayable(ReplayCheck& check, std::size_t space, const std::byte* data, Access mode, RowRange r) const;
  /// The bookkeeping of finish() for a replay of such work, enqueued on `stream`.
  void replayed(std::size_t space, Stream& stream, Access mode, RowRange r);
  /// As replayable(), for a recorded copy of `r` from the replica in `from` (at `source` then) to
  /// the one in `to` (at `target`): both still there, and the source's rows valid by then.
  bool copy_replayable(ReplayCheck& check, std::size_t from, std::size_t to, const std::byte* source,
                       const std::byte* target, RowRange r) const;
  /// The bookkeeping of copy() for a replay of a recorded copy, enqueued on `stream`.
  void copy_replayed(std::size_t from, std::size_t to, Stream& stream, RowRange r);

  // For MemoryCore's eviction, with `mutex` held by the evicting thread.
  /// No access in flight on the replica and no host hold: nothing would notice it vanish.
  bool evictable(std::size_t space) const;
  /// Copies the rows only this replica holds to the host, waits for all work on the replica,
  /// and frees it. Returns the bytes written back.
  std::size_t evict(std::size_t space);

  const std::shared_ptr<MemoryCore> core;
  const std::string name;
  const std::size_t rows;
  const std::size_t row_bytes;
  const std::size_t bytes;
  mutable std::mutex mutex;
  std::vector<Replica> replicas;  // by space

 private:
  // Checks (buffer_checks.cpp): each throws tessera::Error saying what was wrong and what to do.
  // The call is described only when a check fails, so the common path formats nothing.
  struct Call {
    const char* what;  // "prepare", "finish", "request"
    std::size_t space;
    const Stream* stream;  // null for the host's request
    Access mode;
    RowRange rows;
  };
  std::string describe(const Call& call) const;
  void check_space(std::size_t space, const char* what) const;
  void check_rows(const Call& call) const;
  void check_stream(const Call& call) const;
  void check_conflicts(const Call& call) const;
  void check_written(const Call& call) const;

  // Coherence (replica_transfers.cpp).
  void ensure_replica(std::size_t space);
  void free_replica(std::size_t space);
  /// Copies into `space` every row of `r` it lacks, each from the best replica holding it.
  void make_valid(std::size_t space, RowRange r);
  std::vector<std::size_t> sources_for(std::size_t space) const;
  /// One copy, or two through the host between devices of different kinds.
  void transfer(std::size_t from, std::size_t to, RowRange r);
  void copy(std::size_t from, std::size_t to, RowRange r);
  /// The books of a copy of `r` from `from` to `to` just enqueued on `stream` (by copy(), or by
  /// a replay of a recorded one): its end, the destination's rows valid, the bytes counted.
  void copied(std::size_t from, std::size_t to, Stream& stream, RowRange r);
  static CopyDirection copy_direction(std::size_t from, std::size_t to) noexcept {
    return from == 0 ? CopyDirection::host_to_device
           : to == 0 ? CopyDirection::device_to_host
                     : CopyDirection::device_to_device;
  }
  /// Makes `stream` wait on the device for pending work on `r` of `replica`: its writes, and
  /// its reads too when the new work writes.
  void wait_for(Stream& stream, Replica& replica, RowRange r, bool include_reads);
  void record(Replica& replica, RowRange r, const Event& done, Stream* stream, bool writes);
  /// What finish() records once the access is off the books: the work's end on `stream`, and,
  /// for a write, the replica as the only valid one of `r`.
  void ended(std::size_t space, Stream& stream, Access mode, RowRange r);
  void keep_alive_until(Stream& stream);

  /// Under `mutex`, when a host write of `r` has ended: marks the host replica the sole valid
  /// copy when it is (every row written, nothing else in flight or held, no other replica valid).
  void note_host_write_ended(RowRange r);

  /// While prepare() makes rows valid for work a capture records: the recording stream.
  Stream* recording_ = nullptr;
  /// Bytes copied inside recordings (copy() on `recording_`): replayed with them, where other
  /// copies made for recorded work spoil the recording.
  std::size_t recorded_copy_bytes_ = 0;
  /// Which rows each replica will hold when a replay gets to the effect being checked: the
  /// state now, changed by the effects checked before it (replayable()).
  std::vector<RowRanges>& replay_validity(ReplayCheck& check) const;
  /// Whether `w` has run: its event is ready and was not recorded for a capture still recording.
  static bool settled(const PendingWork& w);
  /// Whether work being recorded (not run yet) writes rows of `r` in `replica`.
  bool written_by_recording(const Replica& replica, RowRange r) const;

  std::vector<AccessInFlight> in_flight_;
  std::vector<HostHold> holds_;  // host readers share rows; a host writer has them alone
  TransferStats transferred_;
  // The host replica while it is the only valid copy and only host work has touched the buffer
  // since a host write of every row; cleared by any device access or host request.
  std::atomic<void*> host_sole_{nullptr};
};

/// A buffer access in recorded work (BufferState::finish while its stream records), redone at
/// each replay.
class AccessReplay final : public ReplayEffect {
 public:
  AccessReplay(std::shared_ptr<BufferState> state, std::size_t space, const std::byte* data, Access mode,
               RowRange rows);
  bool ready(ReplayCheck& check) const override;
  void replayed(Stream& origin) override;

 private:
  std::shared_ptr<BufferState> state_;
  std::size_t space_;
  const std::byte* data_;
  Access mode_;
  RowRange rows_;
};

/// A copy between replicas enqueued inside recorded work (rows that recorded work wrote, copied
/// for recorded work that reads them elsewhere: a one-site tensor written on one device and read
/// through `uniform` on the others), replayed with it, its bookkeeping redone at each replay.
class CopyReplay final : public ReplayEffect {
 public:
  CopyReplay(std::shared_ptr<BufferState> state, std::size_t from, std::size_t to, const std::byte* source,
             const std::byte* target, RowRange rows);
  bool ready(ReplayCheck& check) const override;
  void replayed(Stream& origin) override;

 private:
  std::shared_ptr<BufferState> state_;
  std::size_t from_, to_;
  const std::byte* source_;
  const std::byte* target_;
  RowRange rows_;
};

}  // namespace tessera::detail
