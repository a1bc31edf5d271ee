// Jacobi3D (PREMA §4.3, the Charm++ proxy: apps/jacobi3d) on the suite's two ranks: the
// distributed tensor and the mobile objects against the hand-written MPI version, all three
// built here with the suite's -O3 -march=native and run alternately, round after round, so a
// slow minute of this VM falls on all of them. Each figure is the median of the rounds' time per
// iteration (so the record's ratio is that of the medians), and a line under it gives the median
// of the rounds' own ratios, with every round's. The target: the tessera variants at most
// the MPI version's time at 256^3 in 4^3 blocks.
#include "jacobi3d_ranks.hpp"

#include "jacobi3d/mpi_solver.hpp"
#include "jacobi3d/objects_solver.hpp"
#include "jacobi3d/tensor_solver.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

bool bench_jacobi3d_ranks(tessera::dist::Communicator& comm, tessera::bench::Report& report, bool quick) {
  const bool lead = comm.rank() == 0;
  jacobi3d::Problem p;
  p.size = quick ? 64 : 256;
  p.blocks = 4;
  const int rounds = quick ? 3 : 5;
  std::vector<double> mpi_ms, tensor_ms, objects_ms, tensor_ratio, objects_ratio, mpi_halo, objects_halo, tensor_halo;
  bool same = true;
  for (int round = 0; round < rounds; ++round) {
    const auto mpi = jacobi3d::solve_with_mpi(MPI_COMM_WORLD, p);
    const double exchange = comm.all_reduce(mpi.exchange_seconds, tessera::dist::Communicator::Reduce::max);
    const auto tensor = jacobi3d::solve_with_tensors(comm, p, "host");
    // The same iterations with the halos left stale: what the exchanges add to the tensor's.
    const auto sweeps_only = jacobi3d::solve_with_tensors(comm, p, "host", jacobi3d::Halos::left_stale);
    const auto objects = jacobi3d::solve_with_objects(comm, p);
    const double compute = comm.all_reduce(objects.compute_seconds, tessera::dist::Communicator::Reduce::max);
    auto agrees = [&](const jacobi3d::Outcome& o) {
      return o.iterations == mpi.outcome.iterations && o.error == mpi.outcome.error;
    };
    same = same && agrees(tensor.outcome) && agrees(objects.outcome);
    const double per = 1e3 / mpi.outcome.iterations;
    mpi_ms.push_back(mpi.seconds * per);
    tensor_ms.push_back(tensor.seconds * per);
    objects_ms.push_back(objects.seconds * per);
    tensor_ratio.push_back(tensor.seconds / mpi.seconds);
    objects_ratio.push_back(objects.seconds / mpi.seconds);
    mpi_halo.push_back(exchange / mpi.seconds);
    objects_halo.push_back(std::max(0.0, objects.seconds - compute) / objects.seconds);
    const double sweeps_s = sweeps_only.seconds * tensor.outcome.iterations / sweeps_only.outcome.iterations;
    tensor_halo.push_back(std::max(0.0, tensor.seconds - sweeps_s) / tensor.seconds);
  }
  if (lead) {
    const std::string name = "jacobi3d-" + std::to_string(p.size) + "^3-b" + std::to_string(p.blocks);
    const double mpi_median = median(mpi_ms);
    auto add = [&](const char* variant, const std::vector<double>& ms, const std::vector<double>& ratio) {
      tessera::bench::Record r{name, variant, "per-iteration", median(ms), "ms", "hand-written MPI", mpi_median, 0};
      report.add(r);
      std::printf("  %s: median of %d alternated rounds' ratios %.3f (rounds:", variant, rounds, median(ratio));
      for (double x : ratio) std::printf(" %.3f", x);
      std::printf(")\n");
    };
    add("tensor+graph", tensor_ms, tensor_ratio);
    add("mobile objects", objects_ms, objects_ratio);
    std::printf(
        "  halo not hidden: MPI %.0f %% (posting, packing, copying and waiting for faces), objects %.0f %% "
        "(all but the busiest rank's block steps), tensor %.0f %% (its time less that of the same graph "
        "without halo exchanges)\n",
        100 * median(mpi_halo), 100 * median(objects_halo), 100 * median(tensor_halo));
  }
  if (lead && !same) std::fprintf(stderr, "jacobi3d on 2 ranks: a tessera variant disagrees with the MPI version\n");
  return same;
}
