// tessera-bench-kernels [--json FILE] [--quick] [--only saxpy|particles|flux|cuda]
// for_each kernels against hand-written OpenMP loops, each row with its baseline and
// the STREAM triad timed in the same interleaved rounds. Exits 1 when a tessera result differs
// from its baseline's.
#include "baselines.hpp"
#include "kernels.hpp"

#include "common/quiet_baseline_threads.hpp"
#include "hot_loops.generated.hpp"

#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  using namespace tessera::bench;
  rerun_with_environment(argv, {passive_openmp});
  const Args args = parse_args(argc, argv);
  Settings s;
  s.quick = args.quick;
  s.rounds = args.quick ? 3 : 7;
  Report report("kernels");
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("kernels suite on %u hardware threads, baselines %s (OMP_WAIT_POLICY=%s)%s\n",
              std::thread::hardware_concurrency(),
              baseline::have_openmp() ? "with OpenMP" : "WITHOUT OpenMP (serial: ratios are not meaningful)",
              wait_policy ? wait_policy : "unset", args.quick ? " (quick)" : "");
  print_hot_loops(kBaselineHotLoops, kBaselineCompiler);
  std::printf("ratios: median over %d interleaved rounds of baseline time / tessera time (above 1: tessera faster)\n",
              s.rounds);
  report.header();
  StreamArrays triad(s.quick ? (std::size_t{1} << 22) : (std::size_t{1} << 24));
  if (args.runs("saxpy")) run_saxpy(report, s, triad);
  if (args.runs("particles")) run_particles(report, s, triad);
  if (args.runs("flux")) run_flux(report, s, triad);
  if (args.runs("jacobi")) run_jacobi(report, s, triad);
#if defined(TESSERA_BENCH_HAVE_CUDA)
  if (args.runs("cuda")) run_cuda_kernels(report, s);
#endif
  report.write_json(args.json);
  if (any_mismatch()) {
    std::fprintf(stderr, "a tessera kernel's result differs from its baseline's (see MISMATCH above)\n");
    return 1;
  }
  return 0;
}
