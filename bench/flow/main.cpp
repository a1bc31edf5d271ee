// tessera-bench-flow [--json FILE] [--quick] [--only overhead|options|mlp]
// The dataflow front end against its baselines, each measured in the same run (suites.hpp).
#include "suites.hpp"

#include "common/quiet_baseline_threads.hpp"
#include "hot_loops.generated.hpp"  // the options pricer's loops (options.cmake)

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  tessera::bench::rerun_with_environment(argv, {{"OMP_WAIT_POLICY", "passive"}});
  std::string json, only;
  flow_bench::Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      o.quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--quick] [--only overhead|options|mlp]\n", argv[0]);
      return 2;
    }
  }
  tessera::bench::Report report("flow");
  if (only.empty() || only == "options")
    tessera::bench::print_hot_loops(tessera::bench::kBaselineHotLoops, tessera::bench::kBaselineCompiler);
  report.header();
  if (only.empty() || only == "overhead") flow_bench::overhead(report, o);
  if (only.empty() || only == "options") flow_bench::options(report, o);
  if (only.empty() || only == "mlp") flow_bench::mlp(report, o);
  report.write_json(json);
  return 0;
}
