#pragma once
// ProgressSource: completions that happen only when somebody asks (MPI requests, device events
// polled without a callback). Executor workers ask while they are awake: between their tasks and
// between the chunks of a parallel loop (at most every 50 us), and while they look for work
// before they sleep, so a message or event that lands while a graph waits for it is seen within
// a poll instead of when a progress thread next wakes, and the nodes it releases run at once on
// a worker. Workers never spin longer for it: once their look-for-work window ends they sleep,
// the last one to fall asleep tells the sources (unattended()), and each source's own thread (if
// it has one) takes over. While workers attend, such a thread can sleep long instead of waking
// thousands of times a second to take a core from them.

#include <cstdint>

namespace tessera {

/// Derive and register: `poll()` is then called by the workers of every executor, possibly by
/// several at once, until the registration ends.
class ProgressSource {
 public:
  /// Tests for completions and runs their callbacks; returns whether anything completed. Must
  /// not block (return false at once when another thread is polling) and must not throw.
  /// Callbacks it runs that complete graph nodes only queue their successors: no node runs
  /// inside poll().
  virtual bool poll() noexcept = 0;
  /// Called (on a worker, about to sleep) when no executor worker is awake any more: nobody polls
  /// the source now but its own thread, which this should wake. Default: nothing.
  virtual void unattended() noexcept {}

 protected:
  ~ProgressSource() = default;
};

/// A source's registration: while it lives, workers poll the source. Ending it (destroying it or
/// reset()) returns only once no worker is inside the source's poll().
///
///   struct Mpi : tessera::ProgressSource { bool poll() noexcept override { return test_all(); } } mpi;
///   tessera::ProgressRegistration registered = tessera::register_progress_source(mpi);
class ProgressRegistration {
 public:
  ProgressRegistration() = default;
  ProgressRegistration(ProgressRegistration&& other) noexcept : id_(other.id_) { other.id_ = 0; }
  ProgressRegistration& operator=(ProgressRegistration&& other) noexcept;
  ProgressRegistration(const ProgressRegistration&) = delete;
  ProgressRegistration& operator=(const ProgressRegistration&) = delete;
  ~ProgressRegistration() { reset(); }

  /// Ends the registration (no effect when there is none).
  void reset() noexcept;
  bool active() const noexcept { return id_ != 0; }

 private:
  friend ProgressRegistration register_progress_source(ProgressSource& source);
  explicit ProgressRegistration(std::uint64_t id) noexcept : id_(id) {}
  std::uint64_t id_ = 0;
};

/// Registers `source` with every executor's workers; keep it alive while registered.
ProgressRegistration register_progress_source(ProgressSource& source);

/// How many executor workers are awake now (running tasks or looking for work), in every
/// executor of the process. Each polls the registered sources at least every 50 us of tasks (or
/// of a loop's chunks) and before it sleeps; a source's own thread may sleep long while this is
/// not zero.
int attending_workers() noexcept;

/// Held around a blocking wait for something only a poll completes: if the calling thread is an
/// executor worker, it stops counting in attending_workers() until the guard ends (and, the last
/// awake one, calls the sources' unattended()), since a blocked worker polls nothing. On any
/// other thread it does nothing.
///
///   { tessera::BlockedWorker blocked; cv.wait(lock, [&] { return done; }); }
class BlockedWorker {
 public:
  BlockedWorker() noexcept;
  ~BlockedWorker();
  BlockedWorker(const BlockedWorker&) = delete;
  BlockedWorker& operator=(const BlockedWorker&) = delete;

 private:
  bool counted_ = false;
};

}  // namespace tessera
