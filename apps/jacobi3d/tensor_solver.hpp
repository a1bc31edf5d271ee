#pragma once
// Jacobi3D on a distributed tensor: the same proxy (jacobi.hpp) written as one would write it on
// one process, a padded tensor and a graph, with the grid spread over the ranks by declaring it
// so. The blocks of the proxy are the tensor's blocks along each rank's part (sub-partitions),
// the periodic wrap of the block index is the tensor's periodic halo, and the graph's padded
// access sends the faces between ranks; every rank's blocks may live on its devices (sim, CUDA).
// Same arithmetic in the same order as the reference, so the same bits.

#include "jacobi.hpp"
#include "tensor_sweep.hpp"

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

struct TensorRun {
  Outcome outcome;
  double seconds = 0;              // the iterations, all ranks between two barriers
  std::vector<double> field;       // the whole grid at the end (x fastest), every rank
  tessera::Extent<3> rank_grid{};  // how the grid was spread
};

/// What solve_with_tensors runs: the proxy, or, to time an iteration without its halo
/// exchanges, the same sweeps reading the padding as it stands (wrong values, same kernel).
enum class Halos { exchanged, left_stale };

/// Runs the proxy on `comm`'s ranks, each rank's part on `devices` (a DeviceSet specification).
/// Collective.
inline TensorRun solve_with_tensors(tessera::dist::Communicator& comm, const Problem& p,
                                    const std::string& devices = "host", Halos halos = Halos::exchanged) {
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
  auto iteration = [&](tessera::Tensor<double, 3, tessera::Contiguous>& from,
                       tessera::Tensor<double, 3, tessera::Contiguous>& to, const char* name) {
    // The largest change is reduced as the sweep runs (reduce_into): a tensor of changes for a
    // reduce to read back cost a write and a read of 8 bytes a cell, which the MPI loop does not have.
    auto g = std::make_unique<tessera::Graph>(name);
    const TensorSweep sweep = TensorSweep::for_blocks_of(n);
    // A 7-point stencil: a star, whose halo is the six faces (as the proxy's messages), not 26 neighbours.
    if (halos == Halos::exchanged)
      g->split(sweep, tessera::concurrent_padded_access(from, tessera::StencilShape::star()), tessera::write_only(to),
               tessera::reduce_into(largest, tessera::Max{}));
    else
      g->split(sweep, tessera::read_only(from), tessera::write_only(to), tessera::reduce_into(largest, tessera::Max{}));
    return g;
  };
  const auto forward = iteration(u, v, "jacobi u->v"), backward = iteration(v, u, "jacobi v->u");

  TensorRun run;
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

}  // namespace jacobi3d
