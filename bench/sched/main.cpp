// tessera-bench-sched [--json FILE] [--quick]
#include "shapes.hpp"

#include "common/report.hpp"
#include "hot_loops.generated.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace {

// Context for every number below: how long a cache line takes to go to another core and back.
// On shared VMs it varies several-fold with where the vCPUs land (0.1-0.5 us seen here).
double core_to_core_round_trip_ns() {
  alignas(64) static std::atomic<int> flag{0};
  constexpr int trips = 100000;
  flag.store(0);
  std::thread other([] {
    for (int i = 0; i < trips; ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < trips; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / trips;
  other.join();
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  auto args = tessera::bench::parse_args(argc, argv);
  tessera::bench::Report report("sched");
  std::printf("sched suite on %u hardware threads%s\n", std::thread::hardware_concurrency(), args.quick ? " (quick)" : "");
  tessera::bench::print_hot_loops(tessera::bench::kBaselineHotLoops, tessera::bench::kBaselineCompiler);
  report.header();
  if (std::thread::hardware_concurrency() > 1)
    report.add({"core-to-core", "cache-line", "round-trip", core_to_core_round_trip_ns(), "ns", "", 0, 0});
  tessera::bench::run_graph_benchmarks(report, args.quick);
  tessera::bench::run_loop_benchmarks(report, args.quick);
  report.write_json(args.json);
}
