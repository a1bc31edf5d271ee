// The Eikonal equation |grad phi| = 1 with one source at the centre of [0, 1]^D, solved with the
// Fast Iterative Method in a band around the source (Ripple §7.4, Table 5), on a tensor of Cells
// in the layout chosen on the command line, partitioned over the selected devices. Checks the
// result against the exact distance and exits non-zero when the error exceeds the bound.
//
//   tessera-eikonal [--dims 2|3] [--size N] [--band B] [--precision float|double]
//                   [--layout contiguous|strided] [--devices SPEC] [--driver graph|direct]
//
// --driver direct runs the same kernels from a host loop instead of a tessera::Graph.

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>

#include "fim.hpp"

#include <cstdio>
#include <string>

struct Settings {
  std::size_t dims = 2;
  std::size_t size = 256;
  std::size_t band = 10;
  std::string precision = "float";
  std::string layout = "strided";
  std::string devices = "host";
  eikonal::Driver driver = eikonal::Driver::graph;
};

template <typename T, std::size_t D, typename Layout>
int run(const Settings& s) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(s.devices);
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  eikonal::Problem<D> problem;
  problem.size = s.size;
  problem.band = s.band;
  // One partition per device, stacked along the slowest dimension (whole-row halos).
  problem.partitions[D - 1] = devices.num_accelerators() > 0 ? devices.num_accelerators() : 1;

  const eikonal::Solution<T> solution = eikonal::solve<T, D, Layout>(memory, executor, problem, s.driver);
  const eikonal::Errors e = eikonal::measure_errors(problem, solution.phi);
  const double bound = eikonal::error_bound(problem);
  std::printf("eikonal: %zu-D, %zu^%zu cells, band %zu, %s, %s layout on %s (%s): %zu iterations in %.3f ms "
              "(%.3f ms each)\n",
              D, s.size, D, s.band, s.precision.c_str(), Layout::name, s.devices.c_str(),
              s.driver == eikonal::Driver::graph ? "graph" : "direct calls", solution.iterations,
              solution.seconds * 1e3, solution.seconds * 1e3 / static_cast<double>(solution.iterations));
  std::printf("eikonal: %zu sites in the band; error against |x - centre|: max %.3g (%.2f h), mean %.3g (%.2f h); "
              "bound %.3g\n",
              e.computed, e.max, e.max / problem.spacing(), e.mean, e.mean / problem.spacing(), bound);
  if (e.max > bound || e.missing > 0 || e.beyond_band > 0) {
    std::fprintf(stderr, "eikonal: FAILED: max error %.3g (bound %.3g), %zu band sites not reached, %zu beyond it\n",
                 e.max, bound, e.missing, e.beyond_band);
    return 1;
  }
  return 0;
}

template <typename T, std::size_t D>
int with_layout(const Settings& s) {
  if (s.layout == "contiguous") return run<T, D, tessera::Contiguous>(s);
  if (s.layout == "strided") return run<T, D, tessera::Strided>(s);
  throw tessera::Error("--layout must be contiguous or strided, got '" + s.layout + "'");
}

template <typename T>
int with_dims(const Settings& s) {
  if (s.dims == 2) return with_layout<T, 2>(s);
  if (s.dims == 3) return with_layout<T, 3>(s);
  throw tessera::Error("--dims must be 2 or 3, got " + std::to_string(s.dims));
}

std::size_t count(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || value[0] == '-')
    throw tessera::Error(flag + " takes a non-negative whole number, got '" + value + "'");
  return static_cast<std::size_t>(n);
}

eikonal::Driver driver(const std::string& value) {
  if (value == "graph") return eikonal::Driver::graph;
  if (value == "direct") return eikonal::Driver::direct;
  throw tessera::Error("--driver must be graph or direct, got '" + value + "'");
}

int main(int argc, char** argv) try {
  Settings s;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 == argc) throw tessera::Error("option '" + flag + "' needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--dims") s.dims = count(flag, value);
    else if (flag == "--size") s.size = count(flag, value);
    else if (flag == "--band") s.band = count(flag, value);
    else if (flag == "--precision") s.precision = value;
    else if (flag == "--layout") s.layout = value;
    else if (flag == "--devices") s.devices = value;
    else if (flag == "--driver") s.driver = driver(value);
    else throw tessera::Error("unknown option '" + flag +
                              "' (use --dims, --size, --band, --precision, --layout, --devices, --driver)");
  }
  if (s.size == 0) throw tessera::Error("--size must be at least 1");
  if (s.precision == "float") return with_dims<float>(s);
  if (s.precision == "double") return with_dims<double>(s);
  throw tessera::Error("--precision must be float or double, got '" + s.precision + "'");
} catch (const std::exception& e) {
  std::fprintf(stderr, "eikonal: %s\n", e.what());
  return 2;
}
