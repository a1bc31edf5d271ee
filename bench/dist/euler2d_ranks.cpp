// The euler2d shock-bubble spread over the suite's two ranks against one rank stepping the whole
// grid alone on every core of the node, in the same run: cells per second per core (the issue's
// target: the two ranks keep >= 0.9 of one rank's throughput per core). Both step as the app
// does, runs of a graph of 16 steps (tessera-euler2d's --steps-per-run); the two ranks' states
// must match one process's bit for bit, or the benchmark fails.
#include "euler2d_ranks.hpp"

#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

euler2d::Problem bubble(std::size_t n) {
  euler2d::ShockBubble config;
  config.nx = config.ny = n;
  return euler2d::shock_bubble(config);
}

constexpr std::size_t steps_per_run = 16;  // tessera-euler2d's default

// Seconds for `steps` steps, in runs of the solver's graph of steps_per_run steps, after one
// run to warm up (first-touch, workers awake, the ranks' channels matched).
template <typename Solver>
double time_steps(Solver& solver, tessera::Executor& executor, std::size_t steps, tessera::dist::Communicator* comm) {
  tessera::Graph g("euler steps");
  solver.add_steps(g, steps_per_run);
  g.run(executor).get();
  if (comm) comm->barrier();
  const auto start = clock_type::now();
  for (std::size_t k = 0; k < steps / steps_per_run; ++k) g.run(executor).get();
  if (comm) comm->barrier();  // the run ends when the slower rank's does
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace

bool bench_euler2d_ranks(tessera::dist::Communicator& comm, tessera::bench::Report& report, bool quick) {
  const bool lead = comm.rank() == 0;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t steps = (quick ? 1 : 3) * steps_per_run;
  bool same = true;
  for (std::size_t n : quick ? std::vector<std::size_t>{256} : std::vector<std::size_t>{256, 512, 1024}) {
    const double cells = static_cast<double>(n * n) * static_cast<double>(steps);
    tessera::DeviceSet devices = tessera::DeviceSet::select("host");
    tessera::MemoryManager memory(devices);
    double alone_rate = 0, ranks_rate = 0;
    std::vector<euler2d::State<double>> alone_cells;
    for (int round = 0; round < 3; ++round) {
      // One rank alone, with the node's every core; the other waits without spinning.
      if (lead) {
        tessera::Executor executor;
        euler2d::EulerSolver<double, tessera::Strided> alone(memory, executor, bubble(n));
        alone_rate = std::max(alone_rate, cells / time_steps(alone, executor, steps, nullptr));
        if (round == 0) alone_cells = alone.gather();
      }
      comm.barrier();
      // Both ranks, each with its share of the cores, as tessera-euler2d sizes them.
      tessera::Executor executor(comm.executor_options());
      euler2d::SolverOptions options;
      options.ranks = &comm;
      euler2d::EulerSolver<double, tessera::Strided> spread(memory, executor, bubble(n), options);
      ranks_rate = std::max(ranks_rate, cells / time_steps(spread, executor, steps, &comm));
      const std::vector<euler2d::State<double>> mine = spread.gather();
      if (round == 0 && lead)
        same = same && mine.size() == alone_cells.size() &&
               std::memcmp(mine.data(), alone_cells.data(), mine.size() * sizeof(mine[0])) == 0;
    }
    if (lead)
      report.add({"euler2d-" + std::to_string(n) + "^2", "2 ranks", "per-core", ranks_rate / cores * 1e-6, "Mcell/s",
                  "1 rank alone", alone_rate / cores * 1e-6, 0});
  }
  if (lead && !same) std::fprintf(stderr, "euler2d on 2 ranks: the state differs from one process's\n");
  return same;
}
