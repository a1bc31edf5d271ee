// tessera-poisson: OPS's Poisson test on the loops front end. Prints the total error and whether
// it is within 0.001 % of OPS's expected value (default 20 x 20 grid, 10 iterations).
//
//   tessera-poisson --devices sim:4
//   tessera-poisson --tile-rows 4     (cache-blocked chains on the host)
//   tessera-poisson --devices sim:2:speed=1,4 --hybrid   (CPU workers beside the devices, balanced)
//   tessera-poisson --devices sim:2 --hybrid --overlapped   (one overlapped tile per participant a chain)
//   tessera-poisson-cuda --devices cuda [--hybrid]      (the nvcc build, main_cuda.cu: loops run as GPU kernels)
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

int positive(std::string_view option, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < 0 || v > 1 << 20)
    throw tessera::Error(std::string(option) + " expects a non-negative integer, got '" + value + "'");
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  poisson::Problem p;
  std::string devices = "host";
  tessera::loops::ContextOptions options;
  try {
    for (int a = 1; a < argc; ++a) {
      const std::string_view opt = argv[a];
      if (opt == "--hybrid") {
        options.hybrid = true;
        continue;
      }
      if (opt == "--overlapped") {
        options.overlapped_tiles = true;
        continue;
      }
      if (a + 1 >= argc) throw tessera::Error("option " + std::string(opt) + " needs a value");
      const char* value = argv[++a];
      if (opt == "--sizex")
        p.nx = positive(opt, value);
      else if (opt == "--sizey")
        p.ny = positive(opt, value);
      else if (opt == "--iters")
        p.iterations = positive(opt, value);
      else if (opt == "--devices")
        devices = value;
      else if (opt == "--tile-rows") {
        options.tiled = true;
        options.tile_rows = positive(opt, value);
      } else
        throw tessera::Error(
            "unknown option " + std::string(opt) +
            "; use --sizex, --sizey, --iters, --devices, --tile-rows (0: tiles sized from the cache), --hybrid, "
            "--overlapped");
    }
    if (p.nx == 0 || p.ny == 0) throw tessera::Error("--sizex and --sizey must be at least 1");
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
