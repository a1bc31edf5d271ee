// tessera-lb: the D3Q19 binary-fluid lattice Boltzmann solver on targetDP, run from a
// Ludwig-style input file, printing the statistics Ludwig prints.
//
//   tessera-lb apps/lb/regression/serial-spin-lb1.inp            # target from TESSERA_DEVICES, else host
//   tessera-lb serial-spin-lb2.inp --devices sim:1 --steps 10      (--help lists the options)
//   TESSERA_DEVICES=sim:1 tessera-lb serial-spin-lb2.inp           (the same target)

#include "statistics.hpp"

#include <tessera/targetdp.h>
#include <tessera/core/error.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

int run(int argc, char** argv) {
  std::string input;
  std::string devices;  // empty: TESSERA_DEVICES, else the host
  int steps = -1;
  CLI::App app{
      "The D3Q19 binary-fluid lattice Boltzmann solver on a targetDP target (host, sim:N; cuda with "
      "tessera-lb-cuda),\nprinting Ludwig's statistics",
      "tessera-lb"};
  tessera_app::add_standard_options(app);
  app.add_option("input", input, "a Ludwig-style input file")
      ->required()
      ->check(tessera_app::not_an_option)
      ->check(CLI::ExistingFile);
  app.add_option("--devices", devices,
                 "the target: the first accelerator of host, sim:N, ... (default: TESSERA_DEVICES, else the host)")
      ->check(tessera_app::not_an_option);
  app.add_option("--steps", steps, "run N steps instead of the input's N_cycles")->check(CLI::Range(0, 100000000));
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;

  lb::Parameters p = lb::read_input(input);
  if (steps >= 0) p.n_cycles = steps;
  // Chosen before the first allocation, the host by default: targetDP's own default, every GPU
  // found, is no target for the plain build's kernels (tessera-lb-cuda, like the other nvcc
  // builds, runs on a GPU when told `cuda`).
  targetInit(tessera_app::device_selection(devices).c_str());
  std::printf("tessera-lb: D3Q19 binary fluid on targetDP (VVL %d), target %s\n", VVL, tdp_target_name());
  std::printf("Read %d user parameters from %s\n\n", p.parameters_read, input.c_str());

  lb::Solver solver(p);
  std::printf("%s", lb::format_header(p, solver.geometry(), solver.num_wall_links()).c_str());
  std::printf("\nInitial conditions.\n");
  std::printf("%s", lb::format_statistics(lb::compute_statistics(solver.snapshot(), solver.geometry(), p), p).c_str());
  std::printf("\nStarting time step loop.\n");
  const auto start = std::chrono::steady_clock::now();
  double stepping = 0;
  for (int t = 1; t <= p.n_cycles; ++t) {
    solver.step();
    if (t % p.freq_statistics == 0 || t == p.n_cycles) {
      stepping += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const lb::Snapshot s = solver.snapshot();
      std::printf("%s", lb::format_statistics(lb::compute_statistics(s, solver.geometry(), p), p).c_str());
      std::printf("\nCompleted cycle %d\n", t);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double updates = static_cast<double>(solver.geometry().interior_volume()) * p.n_cycles;
  std::printf("\n%d steps in %.3f s (%.1f million site updates per second)\n", p.n_cycles, seconds,
              seconds > 0 ? updates / seconds * 1e-6 : 0.0);
  (void)stepping;
  targetFinalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-lb: %s\n", e.what());
    return 1;
  }
}
