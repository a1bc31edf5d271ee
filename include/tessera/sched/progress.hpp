#pragma once
// ProgressSource: completions that happen only when somebody asks (MPI requests, device events
// polled without a callback). Idle executor workers ask: while a worker looks for work before it
// sleeps, it polls every registered source, so a message or event that lands while the graph
// waits for it is seen within a poll instead of when a progress thread next wakes, and the
// nodes it releases run at once on the worker that saw it. Workers never spin longer for it:
// once their look-for-work window ends they sleep, and the source's own thread (if it has one)
// takes over.

#include <cstdint>

namespace tessera {

/// Derive and register: `poll()` is then called by idle workers of every executor, possibly by
/// several at once, until the registration ends.
class ProgressSource {
 public:
  /// Tests for completions and runs their callbacks; returns whether anything completed. Must
  /// not block (return false at once when another thread is polling) and must not throw.
  /// Callbacks it runs that complete graph nodes only queue their successors: no node runs
  /// inside poll().
  virtual bool poll() noexcept = 0;

 protected:
  ~ProgressSource() = default;
};

/// A source's registration: while it lives, idle workers poll the source. Ending it (destroying
/// it or reset()) returns only once no worker is inside the source's poll().
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

/// Registers `source` with every executor's idle workers; keep it alive while registered.
ProgressRegistration register_progress_source(ProgressSource& source);

}  // namespace tessera
