// tessera-poisson: OPS's Poisson test on the loops front end. Prints the total error and whether
// it is within 0.001 % of OPS's expected value (default 20 x 20 grid, 10 iterations).
//
//   tessera-poisson --devices sim:4
//   tessera-poisson --tile-rows 4     (cache-blocked chains on the host)
//   tessera-poisson --devices sim:2:speed=1,4 --hybrid   (CPU workers beside the devices, balanced)
//   tessera-poisson --devices sim:2 --hybrid --overlapped   (one overlapped tile per participant a chain)
//   tessera-poisson-cuda --devices cuda [--hybrid]      (the nvcc build, main_cuda.cu: loops run as GPU kernels)
//   tessera-poisson --config run.toml    (the same options as `sizex = 40` lines; --help lists them)
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera_app/cli.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  poisson::Problem p;
  std::string devices = "host";
  tessera::loops::ContextOptions options;
  int tile_rows = -1;
  CLI::App app{"OPS's Poisson test (apps/c/poisson) on the loops front end", "tessera-poisson"};
  tessera_app::add_standard_options(app);
  app.add_option("--sizex", p.nx, "cells along x")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--sizey", p.ny, "cells along y")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--iters", p.iterations, "Jacobi iterations")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  app.add_option("--devices", devices, "host, sim:N[:SIZE][:speed=S,...] or cuda")->capture_default_str();
  app.add_option("--tile-rows", tile_rows, "cache-blocked chains, tiles of N rows (0: sized from the cache)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("--hybrid", options.hybrid, "the CPU workers take a part beside the devices");
  app.add_flag("--overlapped", options.overlapped_tiles,
               "one overlapped tile per participant a chain (OPS's Algorithm 2)");
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (tile_rows >= 0) {
    options.tiled = true;
    options.tile_rows = tile_rows;
  }
  try {
    auto set = tessera::DeviceSet::select(devices);
    tessera::Executor executor;
    tessera::loops::Context context(set, executor, options);
    const double err = poisson::solve(context, p);
    std::printf("Total error: %3.15g\n", err);
    if (p.nx != 20 || p.ny != 20 || p.iterations != 10) {
      std::printf("(the expected error is known for the default 20 x 20 grid and 10 iterations only)\n");
      return 0;
    }
    const double off = poisson::percent_off(err);
    std::printf("Total error is within %3.15E %% of the expected error\n", off);
    if (off < 0.001) {
      std::printf("This run is considered PASSED\n");
      return 0;
    }
    std::printf("This run is considered FAILED\n");
    return 1;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-poisson: %s\n", e.what());
    return 2;
  }
}
