// tessera-jacobi3d: the Charm++ jacobi3d proxy as PREMA used it (§4.3), on tessera's mobile
// objects and, in the same run, written by hand on MPI; both must end with the same error after
// the same number of iterations, and print their time per iteration.
//
//   mpirun -np 2 tessera-jacobi3d [--size 256] [--blocks 4] [--iterations 26] [--threshold 0.01]
//                                 [--variant both|tessera|mpi]
//   tessera-jacobi3d --help | --version
#include "mpi_solver.hpp"
#include "objects_solver.hpp"

#include <tessera/core/error.hpp>
#include <tessera_app/cli.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) try {
  jacobi3d::Problem p;
  p.size = 256;
  std::string variant = "both";
  CLI::App app{"Jacobi3D over-decomposed into mobile objects, against the same algorithm on raw MPI",
               "tessera-jacobi3d"};
  tessera_app::add_standard_options(app);
  app.add_option("--size", p.size, "cells per side of the grid (N)")->capture_default_str()->check(CLI::Range(2, 4096));
  app.add_option("--blocks", p.blocks, "blocks per side (B: B^3 mobile objects)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--iterations", p.max_iterations, "at most this many iterations")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--threshold", p.threshold, "stop once no cell changes by this much")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 1e300));
  app.add_option("--variant", variant, "what to run")
      ->capture_default_str()
      ->check(CLI::IsMember({"both", "tessera", "mpi"}))
      ->check(tessera_app::not_an_option);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (p.size % p.blocks != 0)
    throw tessera::Error("--size " + std::to_string(p.size) + " is not a multiple of --blocks " +
                         std::to_string(p.blocks));

  tessera::dist::Communicator comm(&argc, &argv);
  const bool lead = comm.rank() == 0;
  const int nb = p.blocks * p.blocks * p.blocks;
  if (lead)
    std::printf("jacobi3d %d^3 in %d^3 blocks of %d^3 (%d blocks, %.1f per rank) on %d ranks\n", p.size, p.blocks,
                p.cells(), nb, static_cast<double>(nb) / comm.size(), comm.size());
  jacobi3d::Outcome ours{}, theirs{};
  double ours_s = 0, theirs_s = 0;
  if (variant != "mpi") {
    const auto run = jacobi3d::solve_with_objects(comm, p);
    ours = run.outcome;
    ours_s = run.seconds;
    const double compute = comm.all_reduce(run.compute_seconds, tessera::dist::Communicator::Reduce::max);
    if (lead)
      std::printf("tessera objects: %d iterations, error %.6g, %.3f ms per iteration (busiest rank computes %.3f ms)\n",
                  ours.iterations, ours.error, 1e3 * ours_s / ours.iterations, 1e3 * compute / ours.iterations);
  }
  if (variant != "tessera") {
    const auto run = jacobi3d::solve_with_mpi(MPI_COMM_WORLD, p);
    theirs = run.outcome;
    theirs_s = run.seconds;
    const double exchange = comm.all_reduce(run.exchange_seconds, tessera::dist::Communicator::Reduce::max);
    if (lead)
      std::printf("hand-written MPI: %d iterations, error %.6g, %.3f ms per iteration (halo exchange %.0f %% of it)\n",
                  theirs.iterations, theirs.error, 1e3 * theirs_s / theirs.iterations, 100 * exchange / theirs_s);
  }
  if (variant == "both") {
    if (ours.iterations != theirs.iterations || ours.error != theirs.error) {
      std::fprintf(stderr,
                   "tessera-jacobi3d: the two solvers disagree (%d iterations, error %.17g against %d, %.17g)\n",
                   ours.iterations, ours.error, theirs.iterations, theirs.error);
      return 1;
    }
    if (lead)
      std::printf("same result; tessera takes %.3f of the MPI version's time per iteration\n",
                  (ours_s / ours.iterations) / (theirs_s / theirs.iterations));
  }
  return 0;
} catch (const tessera::Error& e) {
  std::fprintf(stderr, "tessera-jacobi3d: %s\n", e.what());
  return 1;
}
