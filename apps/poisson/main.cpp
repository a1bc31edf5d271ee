// tessera-poisson: OPS's Poisson test on the loops front end. Prints the total error and whether
// it is within 0.001 % of OPS's expected value (default 20 x 20 grid, 10 iterations).
//
//   tessera-poisson --devices sim:4
//   tessera-poisson --tile-rows 4     (cache-blocked chains on the host)
//   tessera-poisson --devices sim:2:speed=1,4 --hybrid   (CPU workers beside the devices, balanced)
//   tessera-poisson --devices sim:2 --hybrid --overlapped   (one overlapped tile per participant a chain)
//   tessera-poisson-cuda --devices cuda [--hybrid]      (the nvcc build, main_cuda.cu: loops run as GPU kernels)
//   tessera-poisson --config run.toml    (the same options as `sizex = 40` lines; --help lists them)
//
// Without --devices the devices come from TESSERA_DEVICES, else the host (the plain build's loops
// cannot run on a CUDA GPU; the nvcc build runs them there when asked to).
#include "options.hpp"
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera_app/cli.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  poisson::Settings s;
  CLI::App app{"OPS's Poisson test (apps/c/poisson) on the loops front end", "tessera-poisson"};
  tessera_app::add_standard_options(app);
  poisson::add_options(app, s);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  const poisson::Problem& p = s.problem;
  tessera::loops::ContextOptions options = s.context;
  if (s.tile_rows >= 0) {
    options.tiled = true;
    options.tile_rows = s.tile_rows;
  }
  try {
    auto set = tessera::DeviceSet::select(tessera_app::device_selection(s.devices));
    std::printf("devices: %s\n", set.num_accelerators() == 0 ? "host" : set.spec().c_str());
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
