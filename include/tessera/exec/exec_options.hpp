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
  /// 0: the kernel runs at every interior site. w > 0: it acts only at sites within w of the
  /// global domain's faces (a boundary loader written as a kernel, e.g. euler2d's
  /// ZeroGradientEdges), so the CPU loop (host blocks and sim devices) visits only those: a
  /// block's edge rows and each other row's first and last w sites. Visiting every site to find
  /// the edge ones cost the 512^2 Euler step 0.3-0.45 ms per boundary on one core, against
  /// 2.8 ms for the whole step written by hand. A CUDA launch covers only those sites too (a
  /// grid over the block's edge boxes), except with in_shared or reduce_into arguments, which
  /// cover every site: the kernel must still do nothing at the others.
  ///
  ///   tessera::ExecOptions edges;  edges.edge_width = 1;
  ///   tessera::for_each(ex, edges, euler2d::ZeroGradientEdges{}, state);
  std::size_t edge_width = 0;
  /// Where the kernel must run. Unset: where each block lives. ExecKind::cpu: on the host's
  /// workers, moving device blocks to the host first. ExecKind::gpu: on accelerators only; a
  /// block on the host is then an error.
  std::optional<ExecKind> kind{};
};

}  // namespace tessera
