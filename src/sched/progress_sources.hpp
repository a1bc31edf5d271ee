#pragma once
// The executor's side of ProgressSource: workers poll every registered source between tasks and
// while they look for work, and count themselves in and out of `attending_workers()`.

namespace tessera::detail {

/// Polls each registered source once; returns whether any completed something. Cheap (one
/// atomic load) when none is registered. Call with no executor worker identity on the thread
/// (see ExecutorImpl::poll_progress), so completions queue their successors instead of running
/// them inside the source's poll.
bool poll_progress_sources() noexcept;

/// Whether any source is registered (one load): workers skip their between-task polls otherwise.
bool progress_sources_registered() noexcept;

/// A worker wakes (or starts) / falls asleep (or ends). The last to fall asleep calls every
/// source's unattended().
void worker_attends() noexcept;
void worker_leaves() noexcept;

}  // namespace tessera::detail
