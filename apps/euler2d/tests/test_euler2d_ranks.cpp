// The Euler solver spread over the ranks of an MPI run (ctest runs this binary on 1 to 4 ranks)
// computes, bit for bit, the state one process computes alone: by direct calls and by a graph,
// in two layouts, on the host and on simulated devices, on grids that the ranks cut unevenly;
// and a checkpoint written by the ranks restarts, on the ranks or on one process, into the state
// of the run that never stopped.

#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/graph.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include "../../../tests/dist/mpi_test_support.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

euler2d::Problem bubble(std::size_t nx, std::size_t ny) {
  euler2d::ShockBubble config;
  config.nx = nx;
  config.ny = ny;
  return euler2d::shock_bubble(config);
}

// As the app sizes it: the node's cores shared among its ranks.
tessera::ExecutorOptions workers() { return test_comm().executor_options(); }

template <typename T>
void expect_same_bytes(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  std::size_t first = a.size();
  for (std::size_t k = 0; k < a.size() && first == a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) first = k;
  EXPECT_EQ(first, a.size()) << what << ": the first cell that differs is " << first << " of " << a.size()
                             << " (on rank " << test_comm().rank() << " of " << test_comm().size() << ")";
}

struct Case {
  const char* devices;
  std::size_t nx, ny;
  bool graph;
  std::optional<tessera::Extent<2>> rank_grid;
};

std::string describe(const Case& c, const char* layout) {
  std::string s = std::string(layout) + " on " + c.devices + ", " + std::to_string(c.nx) + " x " +
                  std::to_string(c.ny) + (c.graph ? ", graph" : ", direct calls");
  if (c.rank_grid) s += ", rank grid " + std::to_string((*c.rank_grid)[0]) + " x " + std::to_string((*c.rank_grid)[1]);
  return s + ", " + std::to_string(test_comm().size()) + " ranks";
}

// One process alone and every rank together take `steps` steps from the same start.
template <typename L>
void expect_ranks_match_one_process(const Case& c, std::size_t steps = 24) {
  const std::string what = describe(c, L::name);
  SCOPED_TRACE(what);
  tessera::DeviceSet devices = tessera::DeviceSet::select(c.devices);
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(workers());
  euler2d::EulerSolver<double, L> alone(memory, executor, bubble(c.nx, c.ny));
  alone.run(steps);

  euler2d::SolverOptions options;
  options.ranks = &test_comm();
  options.rank_grid = c.rank_grid;
  euler2d::EulerSolver<double, L> spread(memory, executor, bubble(c.nx, c.ny), options);
  if (c.graph) {
    tessera::Graph g("euler step");
    spread.add_step(g);
    g.run_n(executor, steps).get();
  } else {
    spread.run(steps);
  }
  EXPECT_EQ(spread.steps(), steps);
  EXPECT_EQ(spread.time(), alone.time());
  EXPECT_EQ(spread.dt(), alone.dt());
  const tessera::Box<2>& part = spread.state().local_box();
  EXPECT_EQ(part.volume() < c.nx * c.ny, test_comm().size() > 1) << "each rank should hold only its part";
  expect_same_bytes(spread.gather(), alone.gather(), what);
  memory.synchronize();
}

TEST(EulerRanks, DirectCallsMatchOneProcess) {
  expect_ranks_match_one_process<tessera::Strided>({"host", 64, 64, false, {}});
  expect_ranks_match_one_process<tessera::Contiguous>({"host", 96, 80, false, {}});
  expect_ranks_match_one_process<tessera::Strided>({"sim:2:64MiB", 97, 83, false, {}});
  expect_ranks_match_one_process<tessera::Contiguous>({"sim:2:64MiB", 64, 64, false, {}});
}

TEST(EulerRanks, GraphStepsMatchOneProcess) {
  expect_ranks_match_one_process<tessera::Strided>({"host", 96, 80, true, {}});
  expect_ranks_match_one_process<tessera::Contiguous>({"host", 64, 64, true, {}});
  expect_ranks_match_one_process<tessera::Strided>({"sim:2:64MiB", 64, 64, true, {}});
  expect_ranks_match_one_process<tessera::Contiguous>({"sim:2:64MiB", 97, 83, true, {}});
}

TEST(EulerRanks, TiledLayoutMatchesOneProcess) {
  expect_ranks_match_one_process<tessera::Tiled<8>>({"host", 64, 64, true, {}});
  expect_ranks_match_one_process<tessera::Tiled<8>>({"sim:2:64MiB", 96, 80, false, {}});
}

// Slabs along y (whole rows between ranks) and along x (columns), whatever the default picks.
TEST(EulerRanks, GivenRankGridsMatchOneProcess) {
  const std::size_t n = static_cast<std::size_t>(test_comm().size());
  for (bool graph : {false, true}) {
    expect_ranks_match_one_process<tessera::Strided>({"host", 64, 72, graph, tessera::Extent<2>{1, n}});
    expect_ranks_match_one_process<tessera::Contiguous>({"sim:2:64MiB", 72, 64, graph, tessera::Extent<2>{n, 1}});
  }
}

// As the app steps: one run of the graph per step, with a gather between runs.
TEST(EulerRanks, OneGraphRunPerStepMatchesOneProcess) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(workers());
  euler2d::EulerSolver<double, tessera::Strided> alone(memory, executor, bubble(64, 64));
  euler2d::SolverOptions options;
  options.ranks = &test_comm();
  euler2d::EulerSolver<double, tessera::Strided> spread(memory, executor, bubble(64, 64), options);
  alone.run(6);
  tessera::Graph g("euler step");
  spread.add_step(g);
  for (int k = 0; k < 6; ++k) {
    g.run(executor).get();
    if (k == 2) {
      EXPECT_NO_THROW(spread.check_finite());
    }
  }
  expect_same_bytes(spread.gather(), alone.gather(), "one graph run per step");
  memory.synchronize();
}

// Run to t_final (the last step shortened): the ranks stop on the same step as one process.
TEST(EulerRanks, RunToTFinalMatchesOneProcess) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(workers());
  euler2d::Problem p = bubble(48, 40);
  p.t_final = 0.01;
  euler2d::EulerSolver<double, tessera::Strided> alone(memory, executor, p);
  euler2d::SolverOptions options;
  options.ranks = &test_comm();
  euler2d::EulerSolver<double, tessera::Strided> spread(memory, executor, p, options);
  alone.run();
  tessera::Graph g("euler step");
  spread.add_step(g);
  g.run_until(executor, [&] { return spread.finished(); }).get();
  EXPECT_EQ(spread.time(), 0.01);
  EXPECT_EQ(spread.steps(), alone.steps());
  expect_same_bytes(spread.gather(), alone.gather(), "run to t_final");
  EXPECT_NO_THROW(spread.check_finite());
  memory.synchronize();
}

// A checkpoint the ranks wrote at step 12, restored on the ranks and on one process, continues
// to the state of the run that did not stop.
TEST(EulerRanks, CheckpointOfTheRanksRestartsBitIdentically) {
  tessera::Ranks& comm = test_comm();
  tessera::DeviceSet devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(workers());
  const euler2d::Problem p = bubble(64, 56);
  euler2d::SolverOptions options;
  options.ranks = &comm;
  // Every rank names the same file (rank 0 writes it).
  const std::string path = shared_temp_path("euler2d_ranks_restart", ".ckpt");

  euler2d::EulerSolver<double, tessera::Contiguous> straight(memory, executor, p);
  straight.run(24);

  euler2d::EulerSolver<double, tessera::Strided> first(memory, executor, p, options);
  first.run(12);
  tessera::io::CheckpointScalars scalars;
  scalars.set("time", first.time());
  scalars.set("step", static_cast<std::int64_t>(first.steps()));
  tessera::io::save_checkpoint(path, first.state(), scalars);

  euler2d::EulerSolver<double, tessera::Contiguous> again(memory, executor, p, options);
  const tessera::io::CheckpointScalars saved = tessera::io::load_checkpoint(path, again.state());
  again.restore_clock(saved.real("time"), static_cast<std::size_t>(saved.integer("step")));
  tessera::Graph g("euler step");
  again.add_step(g);
  g.run_n(executor, 12).get();
  EXPECT_EQ(again.steps(), 24u);
  EXPECT_EQ(again.time(), straight.time());
  expect_same_bytes(again.gather(), straight.gather(), "restarted on the ranks");

  euler2d::EulerSolver<double, tessera::Strided> alone(memory, executor, p);
  const tessera::io::CheckpointScalars read = tessera::io::load_checkpoint(path, alone.state());
  alone.restore_clock(read.real("time"), static_cast<std::size_t>(read.integer("step")));
  alone.run(12);
  EXPECT_EQ(alone.time(), straight.time());
  expect_same_bytes(alone.gather(), straight.gather(), "restarted on one process");
  memory.synchronize();
  // Every rank has read the file before rank 0 removes it (an all-gather as the barrier).
  const char here = 1;
  std::vector<char> all(static_cast<std::size_t>(comm.size()));
  tessera::all_gather(comm, comm.next_channel(), &here, 1, all.data());
  if (comm.rank() == 0) std::remove(path.c_str());
}

// A periodic problem: the wrapped cells come from the other ranks through the tensor's periodic
// halo, and the state is still one process's.
TEST(EulerRanks, PeriodicProblemsMatchOneProcess) {
  for (bool graph : {false, true}) {
    tessera::DeviceSet devices = tessera::DeviceSet::select(graph ? "sim:2:64MiB" : "host");
    tessera::MemoryManager memory(devices);
    tessera::Executor executor(workers());
    euler2d::ShockBubble config;
    config.nx = 48;
    config.ny = 40;
    config.boundary = euler2d::Boundary::periodic;
    euler2d::EulerSolver<double, tessera::Strided> alone(memory, executor, euler2d::shock_bubble(config));
    alone.run(20);
    euler2d::SolverOptions options;
    options.ranks = &test_comm();
    euler2d::EulerSolver<double, tessera::Strided> spread(memory, executor, euler2d::shock_bubble(config), options);
    if (graph) {
      tessera::Graph g("euler step");
      spread.add_step(g);
      g.run_n(executor, 20).get();
    } else {
      spread.run(20);
    }
    expect_same_bytes(spread.gather(), alone.gather(), graph ? "periodic, graph, sim:2" : "periodic, direct, host");
    memory.synchronize();
  }
}

TEST(EulerRanks, ARankGridWithoutRanksIsRefused) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(workers());
  euler2d::SolverOptions options;
  options.rank_grid = tessera::Extent<2>{1, 2};
  try {
    euler2d::EulerSolver<double, tessera::Strided> solver(memory, executor, bubble(32, 32), options);
    ADD_FAILURE() << "a rank_grid without ranks was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a rank_grid was given without ranks"), std::string::npos) << e.what();
  }
}

}  // namespace
