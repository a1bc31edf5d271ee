#pragma once
// Jacobi3D on a distributed tensor: the same proxy (jacobi.hpp) written as one would write it on
// one process, a padded tensor and a graph, with the grid spread over the ranks by declaring it
// so. The blocks of the proxy are the tensor's blocks along each rank's part (sub-partitions),
// the periodic wrap of the block index is the tensor's periodic halo, and the graph's padded
// access sends the faces between ranks; every rank's blocks may live on its devices (sim, CUDA).
// Same arithmetic in the same order as the reference, so the same bits.

#include "jacobi.hpp"

#include <tessera/core/error.hpp>
#include <tessera/core/host_device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/dist/communicator.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace jacobi3d {

/// One iteration of the proxy at one cell: the average of the centre and its six neighbours
/// (in the reference's order), its change (the cell's contribution to the largest), and the
/// planes held at 255 (a cell whose global coordinate is a block's first interior plane in x, y
/// or z). `HeldPlanes` says whether a cell lies on such a plane.
template <typename HeldPlanes>
struct TensorSweep {
  HeldPlanes held;
  template <typename In, typename Out, typename Change>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, Change change) const {
    const double c = *in;
    const double v = (c + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1) +
                      *in.offset(2, -1) + *in.offset(2, 1)) /
                     7.0;
    *change = std::fabs(v - c);
    *out = held(in) ? 255.0 : v;
  }
};

/// The planes under any cut of the grid: a global coordinate that is a multiple of n, without an
/// integer division per cell (three per cell cost more than the stencil): the rounded quotient is
/// exact for any side below 2^31. In 32-bit integers and doubles, whose conversions vectorise
/// without AVX-512.
struct PlanesByDivision {
  double n;      // cells per side of a block
  double inv_n;  // 1 / n
  TESSERA_HOST_DEVICE bool first_plane(std::int64_t g) const {
    const double x = static_cast<double>(static_cast<std::int32_t>(g));
    return static_cast<double>(static_cast<std::int32_t>(x * inv_n + 0.5)) * n == x;
  }
  // Without branches (|, not ||), so the row vectorises.
  template <typename In>
  TESSERA_HOST_DEVICE bool operator()(const In& in) const {
    return first_plane(in.global_idx(0)) | first_plane(in.global_idx(1)) | first_plane(in.global_idx(2));
  }
};

/// The planes when every block of the tensor is one block of the proxy (the solver's own cut,
/// whenever the rank grid divides the blocks): a cell's index within its block is 0. The hand-
/// written solvers know their blocks the same way. A 64^3 block on one core: 0.58 ms against
/// 0.61-0.67 with the division (bench/results/README.md, "Jacobi3D's tensor sweep").
struct PlanesByBlockIndex {
  template <typename In>
  TESSERA_HOST_DEVICE bool operator()(const In& in) const {
    return (in.local_idx(0) == 0) | (in.local_idx(1) == 0) | (in.local_idx(2) == 0);
  }
};

/// Whether every block of `t` is exactly one n^3 block of the proxy.
template <typename Tensor>
bool blocks_are_proxy_blocks(const Tensor& t, std::int64_t n) {
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const auto& box = t.geometry(b).interior;
    for (std::size_t d = 0; d < 3; ++d)
      if (box.lo.coords[d] % n != 0 || box.hi.coords[d] - box.lo.coords[d] != n) return false;
  }
  return true;
}

struct TensorRun {
  Outcome outcome;
  double seconds = 0;              // the iterations, all ranks between two barriers
  std::vector<double> field;       // the whole grid at the end (x fastest), every rank
  tessera::Extent<3> rank_grid{};  // how the grid was spread
  bool planes_by_block_index = false;  // this rank's sweep used PlanesByBlockIndex
};

/// How the sweep finds the held planes: PlanesByBlockIndex wherever the cut allows it, or
/// PlanesByDivision always (for tests of the general path).
enum class PlaneTest { by_block_index_where_possible, by_division };

/// Runs the proxy on `comm`'s ranks, each rank's part on `devices` (a DeviceSet specification).
/// Collective.
inline TensorRun solve_with_tensors(tessera::dist::Communicator& comm, const Problem& p,
                                    const std::string& devices = "host",
                                    PlaneTest planes = PlaneTest::by_block_index_where_possible) {
  const std::int64_t n = p.cells();
  const auto blocks = static_cast<std::size_t>(p.blocks);
  tessera::TensorOptions<3> o;
  o.over(comm).with_padding(1);
  o.periodic = {true, true, true};
  // The proxy's planes follow global coordinates, so any cut of the grid gives the same bits:
  // the ranks cut it as the tensor chooses, and each rank's part into about B^3 / ranks blocks,
  // the over-decomposition that lets the blocks away from other ranks compute while faces travel.
  const std::size_t zero[3] = {0, 0, 0}, one[3] = {1, 1, 1},
                    cells[3] = {static_cast<std::size_t>(p.size), static_cast<std::size_t>(p.size),
                                static_cast<std::size_t>(p.size)};
  const tessera::RankDecomposition ranks =
      tessera::make_rank_decomposition("t", 3, cells, zero, static_cast<std::size_t>(comm.size()), one);
  for (std::size_t d = 0; d < 3; ++d) o.sub_partitions.sizes[d] = std::max<std::size_t>(1, blocks / ranks.grid[d]);
  tessera::DeviceSet set = tessera::DeviceSet::select(devices);
  tessera::MemoryManager memory(set);
  tessera::Executor executor(comm.executor_options());
  const tessera::Extent<3> sizes = tessera::Extent<3>::filled(static_cast<std::size_t>(p.size));
  tessera::Tensor<double, 3, tessera::Contiguous> u(memory, sizes, o.named("t")), v(memory, sizes, o.named("next"));

  // The proxy's start: zeros, the planes held.
  std::vector<double> start(sizes.volume(), 0.0);
  tessera::for_each_index(tessera::Box<3>(sizes), [&](const tessera::Index<3>& i) {
    if (i.coords[0] % n == 0 || i.coords[1] % n == 0 || i.coords[2] % n == 0) start[sizes.linear(i)] = 255.0;
  });
  u.fill_from(start.data());

  tessera::ReductionResult<double> largest;
  TensorRun run;
  // Each rank for its own blocks: both tests give the same bits.
  run.planes_by_block_index = planes == PlaneTest::by_block_index_where_possible && blocks_are_proxy_blocks(u, n);
  auto iteration = [&](tessera::Tensor<double, 3, tessera::Contiguous>& from,
                       tessera::Tensor<double, 3, tessera::Contiguous>& to, const char* name) {
    // The largest change is reduced as the sweep runs (reduce_into): a tensor of changes for a
    // reduce to read back cost a write and a read of 8 bytes a cell, which the MPI loop does not have.
    auto g = std::make_unique<tessera::Graph>(name);
    auto sweep = [&](auto held) {
      g->split(TensorSweep<decltype(held)>{held}, tessera::concurrent_padded_access(from), tessera::write_only(to),
               tessera::reduce_into(largest, tessera::Max{}));
    };
    if (run.planes_by_block_index)
      sweep(PlanesByBlockIndex{});
    else
      sweep(PlanesByDivision{static_cast<double>(n), 1.0 / static_cast<double>(n)});
    return g;
  };
  const auto forward = iteration(u, v, "jacobi u->v"), backward = iteration(v, u, "jacobi v->u");

  run.rank_grid = u.rank_grid();
  comm.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < p.max_iterations; ++it) {
    (it % 2 == 0 ? forward : backward)->run(executor).get();
    run.outcome.iterations = it + 1;
    run.outcome.error = largest.value();
    if (run.outcome.error < p.threshold) break;
  }
  comm.barrier();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.field.resize(sizes.volume());
  (run.outcome.iterations % 2 == 1 ? v : u).gather_to(run.field.data());
  return run;
}

/// The reference's blocks as one dense grid (x fastest), to compare with TensorRun::field.
inline std::vector<double> dense_grid(const Problem& p, const std::vector<BlockGrid>& grid) {
  const int n = p.cells(), size = p.size;
  std::vector<double> dense(static_cast<std::size_t>(size) * size * size);
  for (int id = 0; id < static_cast<int>(grid.size()); ++id) {
    const BlockIndex bi = coords(id, p.blocks);
    const BlockGrid& b = grid[static_cast<std::size_t>(id)];
    for (int k = 1; k <= n; ++k)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i) {
          const std::size_t x = static_cast<std::size_t>(bi.x * n + i - 1),
                            y = static_cast<std::size_t>(bi.y * n + j - 1),
                            z = static_cast<std::size_t>(bi.z * n + k - 1);
          dense[x + static_cast<std::size_t>(size) * (y + static_cast<std::size_t>(size) * z)] = b.t[b.at(i, j, k)];
        }
  }
  return dense;
}

}  // namespace jacobi3d
