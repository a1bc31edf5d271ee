// tessera-bench-sched [--json FILE] [--quick]
#include "shapes.hpp"

#include "common/report.hpp"

#include <thread>

int main(int argc, char** argv) {
  auto args = tessera::bench::parse_args(argc, argv);
  tessera::bench::Report report("sched");
  std::printf("sched suite on %u hardware threads%s\n", std::thread::hardware_concurrency(), args.quick ? " (quick)" : "");
  report.header();
  tessera::bench::run_graph_benchmarks(report, args.quick);
  tessera::bench::run_loop_benchmarks(report, args.quick);
  report.write_json(args.json);
}
