// tessera demo: (1) a small named CPU graph — fill, per-partition smoothing and partial sums,
// a final reduction — run repeatedly on the executor, checked against a sequential computation;
// (2) a graph mixing CPU nodes with device nodes on the selected devices (by default two
// simulated devices with a copy-speed model), whose tiles move through Buffers. Both write
// their trace (open in ui.perfetto.dev) and DOT graph.
//
//   tessera-demo [--out DIR] [--size N] [--parts P] [--runs R] [--devices SPEC] [--tiles T]
//   tessera-demo --config run.toml    (the same options as `size = 50000` lines; --help lists them)

#include "device_pipeline.hpp"

#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string out = "build/demo";
  std::size_t size = 1 << 22;
  std::size_t parts = 8;
  std::size_t runs = 20;
  std::string devices;  ///< empty: TESSERA_DEVICES, else two simulated devices
  std::size_t tiles = 8;
};

CLI::App& add_options(CLI::App& app, Options& o) {
  using tessera_app::not_an_option;
  using tessera_app::not_negative;
  tessera_app::add_standard_options(app);
  app.add_option("--out", o.out, "directory of the traces and DOT graphs")->capture_default_str()->check(not_an_option);
  app.add_option("--size", o.size, "elements of the CPU graph's arrays")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  app.add_option("--parts", o.parts, "partitions of the CPU graph (at most --size)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--runs", o.runs, "runs of each graph")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--devices", o.devices,
                 "host, sim:N[:SIZE] or cuda (default: TESSERA_DEVICES, else two simulated devices with slow copies)")
      ->check(not_an_option);
  app.add_option("--tiles", o.tiles, "tiles of the device graph")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 16));
  return app;
}

double initial(std::size_t i) { return std::sin(0.001 * static_cast<double>(i)); }

tessera::DeviceSet demo_devices(const std::string& spec) {
  if (!spec.empty() || std::getenv("TESSERA_DEVICES") != nullptr) return tessera::DeviceSet::select(spec);
  // Two simulated GPUs whose copies take time (2 GB/s, 10 us each; slower than PCIe, to match
  // the slow 'kernels' of a simulated device), so the trace shows copies and kernels
  // overlapping on their separate streams.
  tessera::SimOptions sim;
  sim.memory_bytes = std::size_t{256} << 20;
  sim.copy_bytes_per_second = 2e9;
  sim.copy_latency = std::chrono::microseconds(10);
  return tessera::DeviceSet::simulated(2, sim);
}

}  // namespace

int main(int argc, char** argv) try {
  Options opt;
  CLI::App app{"tessera's demo: a CPU graph and a graph of CPU and device nodes, each traced and checked",
               "tessera-demo"};
  if (const auto exit = tessera_app::parse(add_options(app, opt), argc, argv)) return *exit;
  tessera::DeviceSet devices = demo_devices(opt.devices);
  tessera::ExecutorOptions exec_options;
  exec_options.num_devices = devices.num_accelerators();
  tessera::Executor ex(exec_options);
  const std::size_t n = opt.size, parts = std::min(opt.parts, n);
  std::vector<double> u(n), v(n), partial(parts);
  double total = 0.0;

  tessera::NodeGraph g("demo");
  auto& fill = g.emplace([&] { ex.parallel_for(0, n, [&](std::size_t i) { u[i] = initial(i); }); }).name("fill");
  auto& reduce = g.emplace([&] {
                    total = 0.0;
                    for (double p : partial) total += p;
                  }).name("reduce");
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t lo = p * n / parts, hi = (p + 1) * n / parts;
    auto& smooth = g.emplace([&, lo, hi] {
                      ex.parallel_for(lo, hi, [&](std::size_t i) {
                        double l = i > 0 ? u[i - 1] : u[i], r = i + 1 < n ? u[i + 1] : u[i];
                        v[i] = 0.25 * l + 0.5 * u[i] + 0.25 * r;
                      });
                    }).name("smooth[" + std::to_string(p) + "]");
    auto& sum = g.emplace([&, lo, hi, p] {
                   partial[p] = ex.parallel_reduce(
                       lo, hi, 0.0, [&](std::size_t i, double& a) { a += v[i]; }, std::plus<>{});
                 }).name("sum[" + std::to_string(p) + "]");
    fill.precede(smooth);
    smooth.precede(sum);
    sum.precede(reduce);
  }

  ex.run(g).get();  // warm-up
  ex.start_trace();
  const auto t0 = std::chrono::steady_clock::now();
  ex.run_n(g, opt.runs).get();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tessera::Trace trace = ex.stop_trace();

  double expected = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double c = initial(i), l = i > 0 ? initial(i - 1) : c, r = i + 1 < n ? initial(i + 1) : c;
    expected += 0.25 * l + 0.5 * c + 0.25 * r;
  }
  const double rel = std::abs(total - expected) / std::max(1.0, std::abs(expected));

  std::filesystem::create_directories(opt.out);
  const std::string trace_path = opt.out + "/demo.trace.json", dot_path = opt.out + "/demo.dot";
  trace.save(trace_path);
  std::ofstream(dot_path) << g.to_dot();

  std::printf("tessera demo\n%s", devices.describe().c_str());
  std::printf("  workers        %zu (%zu GPU-priority, %zu CPU-priority)\n", ex.num_workers(), ex.num_gpu_workers(),
              ex.num_cpu_workers());
  std::printf("CPU graph\n");
  std::printf("  graph          '%s': %zu nodes, %zu partitions of %zu elements\n", g.name().c_str(), g.size(), parts,
              n / parts);
  std::printf("  runs           %zu in %.3f ms (%.1f Melem/s)\n", opt.runs, seconds * 1e3,
              static_cast<double>(n * opt.runs) / seconds / 1e6);
  std::printf("  result         %.12f (sequential %.12f, relative difference %.1e) %s\n", total, expected, rel,
              rel < 1e-12 ? "OK" : "MISMATCH");
  std::printf("  trace          %s (%zu slices; open in ui.perfetto.dev)\n", trace_path.c_str(), trace.events.size());
  std::printf("  graph (DOT)    %s (render: dot -Tsvg %s)\n", dot_path.c_str(), dot_path.c_str());

  const std::string device_trace = opt.out + "/devices.trace.json", device_dot = opt.out + "/devices.dot";
  const std::size_t tile_elements = std::max<std::size_t>(n / opt.tiles / 4, 1024);
  const demo::PipelineResult p =
      demo::run_device_pipeline(devices, ex, opt.tiles, tile_elements, opt.runs, device_trace, device_dot);
  const bool device_ok = p.max_error <= 1e-6;
  std::printf("device graph (CPU fill -> device kernel -> CPU check, per tile)\n");
  std::printf("  graph          %zu nodes, %zu tiles of %zu floats over %zu accelerator(s)%s\n", p.nodes, p.tiles,
              tile_elements, devices.num_accelerators(),
              devices.num_accelerators() == 0 ? " (GPU-kind work runs on the host)" : "");
  std::printf("  runs           %zu in %.3f ms; copied %.1f MiB to devices, %.1f MiB back\n", opt.runs, p.seconds * 1e3,
              static_cast<double>(p.bytes_to_devices) / (1 << 20), static_cast<double>(p.bytes_to_host) / (1 << 20));
  std::printf("  result         max |device - host| = %.1e %s\n", p.max_error, device_ok ? "OK" : "MISMATCH");
  std::printf("  trace          %s (%zu slices: worker tracks plus a track per device stream)\n", device_trace.c_str(),
              p.trace_slices);
  std::printf("  graph (DOT)    %s\n", device_dot.c_str());
  return rel < 1e-12 && device_ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "tessera-demo: %s\n", e.what());
  return 2;
}
