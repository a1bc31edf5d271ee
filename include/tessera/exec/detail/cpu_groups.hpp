#pragma once
// The kernel engine's CPU backend for Group kernels: a grid's groups run as a parallel loop on
// the executor's workers, each thread with its own scratch for Group::shared.

#include <cstddef>

#include "tessera/exec/grid.hpp"

namespace tessera {
class Executor;
}

namespace tessera::detail {

/// Runs `group(context, id, scratch)` for every group of `grid`: in parallel on `executor`'s
/// workers (the caller taking part), or on the calling thread alone when `executor` is null (a
/// sim stream's thread), with `shared_bytes` of scratch per thread, reused group after group.
void run_groups(Executor* executor, const Grid& grid, std::size_t shared_bytes,
                void (*group)(void* context, Dim3 id, void* scratch), void* context);

}  // namespace tessera::detail
