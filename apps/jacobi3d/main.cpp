// tessera-jacobi3d: the Charm++ jacobi3d proxy as PREMA used it (§4.3), on tessera's mobile
// objects, on a distributed tensor and graph, and, in the same run, written by hand on MPI; all
// must end with the same error after the same number of iterations, and print their time per
// iteration.
//
//   mpirun -np 2 tessera-jacobi3d [--size 256] [--blocks 4] [--iterations 26] [--threshold 0.01]
//                                 [--variant both|all|tessera|tensor|mpi] [--devices host|sim:2|cuda]
//   tessera-jacobi3d --help | --version
#include "mpi_solver.hpp"
#include "objects_solver.hpp"
#include "tensor_solver.hpp"

#include <tessera/core/error.hpp>
#include <tessera_app/cli.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) try {
  jacobi3d::Problem p;
  p.size = 256;
  std::string variant = "both";
  std::string devices;
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
  app.add_option("--variant", variant,
                 "what to run: both (mobile objects and MPI), all (and the tensor), tessera (mobile objects), "
                 "tensor (distributed tensor and graph), mpi")
      ->capture_default_str()
      ->check(CLI::IsMember({"both", "all", "tessera", "tensor", "mpi"}))
      ->check(tessera_app::not_an_option);
  app.add_option("--devices", devices,
                 "where each rank's part of the tensor variant lives (host, sim:2; default TESSERA_DEVICES, else host)")
      ->check(tessera_app::not_an_option);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (p.size % p.blocks != 0)
    throw tessera::Error("--size " + std::to_string(p.size) + " is not a multiple of --blocks " +
                         std::to_string(p.blocks));

  devices = tessera_app::device_selection(devices);
  tessera::dist::Communicator comm(&argc, &argv);
  const bool lead = comm.rank() == 0;
  const int nb = p.blocks * p.blocks * p.blocks;
  if (lead)
    std::printf("jacobi3d %d^3 in %d^3 blocks of %d^3 (%d blocks, %.1f per rank) on %d ranks\n", p.size, p.blocks,
                p.cells(), nb, static_cast<double>(nb) / comm.size(), comm.size());
  jacobi3d::Outcome ours{}, theirs{}, tensor{};
  double ours_s = 0, theirs_s = 0, tensor_s = 0;
  const bool run_objects = variant == "both" || variant == "all" || variant == "tessera";
  const bool run_tensor = variant == "all" || variant == "tensor";
  const bool run_mpi = variant == "both" || variant == "all" || variant == "mpi";
  if (run_objects) {
    const auto run = jacobi3d::solve_with_objects(comm, p);
    ours = run.outcome;
    ours_s = run.seconds;
    const double compute = comm.all_reduce(run.compute_seconds, tessera::dist::Communicator::Reduce::max);
    if (lead)
      std::printf(
          "tessera objects: %d iterations, error %.6g, %.3f ms per iteration (busiest rank computes %.3f ms; "
          "the rest, %.0f %%, is halo and overhead not hidden)\n",
          ours.iterations, ours.error, 1e3 * ours_s / ours.iterations, 1e3 * compute / ours.iterations,
          ours_s > compute ? 100 * (ours_s - compute) / ours_s : 0.0);
  }
  if (run_tensor) {
    const auto run = jacobi3d::solve_with_tensors(comm, p, devices);
    tensor = run.outcome;
    tensor_s = run.seconds;
    if (lead)
      std::printf("tessera tensor (ranks %zu x %zu x %zu, %s): %d iterations, error %.6g, %.3f ms per iteration\n",
                  run.rank_grid.sizes[0], run.rank_grid.sizes[1], run.rank_grid.sizes[2],
                  devices.empty() ? "TESSERA_DEVICES" : devices.c_str(), tensor.iterations, tensor.error,
                  1e3 * tensor_s / tensor.iterations);
  }
  if (run_mpi) {
    const auto run = jacobi3d::solve_with_mpi(MPI_COMM_WORLD, p);
    theirs = run.outcome;
    theirs_s = run.seconds;
    const double exchange = comm.all_reduce(run.exchange_seconds, tessera::dist::Communicator::Reduce::max);
    if (lead)
      std::printf("hand-written MPI: %d iterations, error %.6g, %.3f ms per iteration (halo exchange %.0f %% of it)\n",
                  theirs.iterations, theirs.error, 1e3 * theirs_s / theirs.iterations, 100 * exchange / theirs_s);
  }
  auto agree = [&](const char* what, const jacobi3d::Outcome& a, double seconds) {
    if (a.iterations != theirs.iterations || a.error != theirs.error) {
      std::fprintf(stderr, "tessera-jacobi3d: %s and MPI disagree (%d iterations, error %.17g against %d, %.17g)\n",
                   what, a.iterations, a.error, theirs.iterations, theirs.error);
      return false;
    }
    if (lead)
      std::printf("same result; %s takes %.3f of the MPI version's time per iteration\n", what,
                  (seconds / a.iterations) / (theirs_s / theirs.iterations));
    return true;
  };
  if (run_mpi && run_objects && !agree("tessera objects", ours, ours_s)) return 1;
  if (run_mpi && run_tensor && !agree("tessera tensor", tensor, tensor_s)) return 1;
  return 0;
} catch (const tessera::Error& e) {
  std::fprintf(stderr, "tessera-jacobi3d: %s\n", e.what());
  return 1;
}
