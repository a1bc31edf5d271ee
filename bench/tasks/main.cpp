// tessera-bench-tasks [--json FILE] [--quick] [--only overhead|dgemm|cuda]
#include "tasks_bench.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  auto args = tessera::bench::parse_args(argc, argv);
  tessera::bench::Report report("tasks");
  report.header();

  if (args.runs("overhead")) {
    // StarPU first, alone in the process while it runs; its workers are gone at shutdown.
    tasks_bench::Shapes starpu;
    const bool have_starpu = tasks_bench::starpu_overhead(args.quick, starpu);
    if (!have_starpu) std::printf("StarPU not built in (install libstarpu-dev): overhead rows have no baseline\n");
    const tasks_bench::Shapes ours = tasks_bench::tessera_overhead(args.quick);
    auto row = [&](const char* shape, double value, double baseline) {
      tessera::bench::Record r{shape, "tessera", "per-task", value, "ns", "", 0, 0};
      if (have_starpu) {
        r.baseline = "starpu";
        r.baseline_value = baseline;
      }
      report.add(r);
    };
    row("chain-100000", ours.chain, starpu.chain);
    row("independent-100000", ours.independent, starpu.independent);
    row("tree-2047", ours.tree, starpu.tree);
  }

  if (args.runs("dgemm")) tasks_bench::dgemm(report, args.quick);
  bool same = true;
#if defined(TESSERA_BENCH_CUBLAS)
  if (args.runs("cuda")) same = tasks_bench::dgemm_cuda(report, args.quick);
#endif
  report.write_json(args.json);
  return same ? 0 : 1;
}
