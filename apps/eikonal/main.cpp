// The Eikonal equation |grad phi| = 1 with one source at the centre of [0, 1]^D, solved with the
// Fast Iterative Method in a band around the source (Ripple §7.4, Table 5), on a tensor of Cells
// in the layout chosen on the command line, partitioned over the selected devices. Checks the
// result against the exact distance and exits non-zero when the error exceeds the bound.
//
//   tessera-eikonal [--dims 2|3] [--size N] [--band B] [--precision float|double]
//                   [--layout contiguous|strided] [--devices SPEC] [--driver graph|direct]
//   tessera-eikonal --config run.toml    (the same options as `size = 64` lines; --help lists them)
//
// --driver direct runs the same kernels from a host loop instead of a tessera::Graph. Without
// --devices the devices come from TESSERA_DEVICES (else the host).

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera_app/cli.hpp>

#include "fim.hpp"

#include <cstdio>
#include <string>

struct Settings {
  std::size_t dims = 2;
  std::size_t size = 256;
  std::size_t band = 10;
  std::string precision = "float";
  std::string layout = "strided";
  std::string devices;  // empty: TESSERA_DEVICES, else the host
  std::string driver = "graph";
};

template <typename T, std::size_t D, typename Layout>
int run(const Settings& s) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(tessera_app::device_selection(s.devices));
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  eikonal::Problem<D> problem;
  problem.size = s.size;
  problem.band = s.band;
  // One partition per device, stacked along the slowest dimension (whole-row halos).
  problem.partitions[D - 1] = devices.num_accelerators() > 0 ? devices.num_accelerators() : 1;

  const eikonal::Driver driver = s.driver == "direct" ? eikonal::Driver::direct : eikonal::Driver::graph;
  const eikonal::Solution<T> solution = eikonal::solve<T, D, Layout>(memory, executor, problem, driver);
  const eikonal::Errors e = eikonal::measure_errors(problem, solution.phi);
  const double bound = eikonal::error_bound(problem);
  std::printf(
      "eikonal: %zu-D, %zu^%zu cells, band %zu, %s, %s layout on %s (%s): %zu iterations in %.3f ms "
      "(%.3f ms each)\n",
      D, s.size, D, s.band, s.precision.c_str(), Layout::name,
      devices.num_accelerators() == 0 ? "host" : devices.spec().c_str(),
      driver == eikonal::Driver::graph ? "graph" : "direct calls", solution.iterations, solution.seconds * 1e3,
      solution.seconds * 1e3 / static_cast<double>(solution.iterations));
  std::printf(
      "eikonal: %zu sites in the band; error against |x - centre|: max %.3g (%.2f h), mean %.3g (%.2f h); "
      "bound %.3g\n",
      e.computed, e.max, e.max / problem.spacing(), e.mean, e.mean / problem.spacing(), bound);
  if (e.max > bound || e.missing > 0 || e.beyond_band > 0) {
    std::fprintf(stderr, "eikonal: FAILED: max error %.3g (bound %.3g), %zu band sites not reached, %zu beyond it\n",
                 e.max, bound, e.missing, e.beyond_band);
    return 1;
  }
  return 0;
}

// The command line admits only these layouts, dimensions and precisions.
template <typename T, std::size_t D>
int with_layout(const Settings& s) {
  if (s.layout == "contiguous") return run<T, D, tessera::Contiguous>(s);
  return run<T, D, tessera::Strided>(s);
}

template <typename T>
int with_dims(const Settings& s) {
  if (s.dims == 2) return with_layout<T, 2>(s);
  return with_layout<T, 3>(s);
}

int main(int argc, char** argv) try {
  Settings s;
  CLI::App app{
      "The Eikonal equation by the Fast Iterative Method in a band around a point source (Ripple 7.4), "
      "checked against the exact distance",
      "tessera-eikonal"};
  tessera_app::add_standard_options(app);
  using tessera_app::not_an_option;
  using tessera_app::not_negative;
  app.add_option("--dims", s.dims, "dimensions of the grid")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::IsMember({2, 3}));
  app.add_option("--size", s.size, "cells per side")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--band", s.band, "cells from the source to solve for")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("--precision", s.precision, "the scalar of phi")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"float", "double"}));
  app.add_option("--layout", s.layout, "layout of the Cell tensor")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"contiguous", "strided"}));
  app.add_option("--devices", s.devices,
                 "a device selection: host, sim:N[:SIZE], ... (default: TESSERA_DEVICES, else the host)")
      ->check(not_an_option);
  app.add_option("--driver", s.driver, "the solve as a tessera::Graph, or its kernels called from a host loop")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"graph", "direct"}));
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (s.precision == "float") return with_dims<float>(s);
  return with_dims<double>(s);
} catch (const std::exception& e) {
  std::fprintf(stderr, "eikonal: %s\n", e.what());
  return 2;
}
