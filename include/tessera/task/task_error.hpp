#pragma once
// TaskError: how a task's failure reaches its handle and the tasks that depend on it. It is the
// executor's NodeError: one error type for a failed unit of work under every front end.

#include <tessera/core/error.hpp>

namespace tessera {

/// A task threw, or did not run because a task it depends on failed. `node_name()` names the
/// task that failed first; `original()` holds what it threw.
///
///   try { handle.get(); }
///   catch (const tessera::TaskError& e) { std::cerr << e.node_name() << ": " << e.what() << '\n'; }
using TaskError = NodeError;

}  // namespace tessera
