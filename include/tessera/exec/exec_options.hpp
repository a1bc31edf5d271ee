#pragma once
// ExecOptions: how for_each and reduce cut a block into work. Defaults suit most kernels; the
// benchmarks show when to change them.

#include <cstddef>
#include <optional>

#include "tessera/sched/exec_kind.hpp"

namespace tessera {

struct ExecOptions {
  /// Launch block shape (x, y, z): the CUDA thread block, the tile `in_shared` stages, and what
  /// IndexedIterator::block_idx/thread_idx count in. Dimensions past the tensor's are ignored.
  std::size_t block[3] = {64, 4, 1};
  /// CPU virtual vector length (targetDP §III.C): the innermost loop runs in strips of this many
  /// sites under `omp simd`. 0 picks one per type: the tile width for Tiled<V>, else 64 bytes'
  /// worth of the element's first scalar (16 floats, 8 doubles).
  std::size_t vvl = 0;
  /// Rows of a block handed to one CPU worker at a time (0: chosen by the executor).
  std::size_t rows_per_task = 0;
  /// Where the kernel must run. Unset: where each block lives. ExecKind::cpu: on the host's
  /// workers, moving device blocks to the host first. ExecKind::gpu: on accelerators only; a
  /// block on the host is then an error.
  std::optional<ExecKind> kind{};
};

}  // namespace tessera
