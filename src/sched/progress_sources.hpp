#pragma once
// The executor's side of ProgressSource: idle workers poll every registered source.

namespace tessera::detail {

/// Polls each registered source once; returns whether any completed something. Cheap (one
/// atomic load) when none is registered. Call with no executor worker identity on the thread
/// (see ExecutorImpl::poll_progress), so completions queue their successors instead of running
/// them inside the source's poll.
bool poll_progress_sources() noexcept;

}  // namespace tessera::detail
