// tessera-bench-kernels [--json FILE] [--quick]
// for_each kernels against hand-written OpenMP loops (issue 4), each row with its baseline and
// the STREAM triad timed in the same interleaved rounds. Exits 1 when a tessera result differs
// from its baseline's.
#include "baselines.hpp"
#include "kernels.hpp"

#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
  using namespace tessera::bench;
  const Args args = parse_args(argc, argv);
  Settings s;
  s.quick = args.quick;
  s.rounds = args.quick ? 3 : 7;
  Report report("kernels");
  std::printf("kernels suite on %u hardware threads, baselines %s%s\n", std::thread::hardware_concurrency(),
              baseline::have_openmp() ? "with OpenMP" : "WITHOUT OpenMP (serial: ratios are not meaningful)",
              args.quick ? " (quick)" : "");
  std::printf("ratios: median over %d interleaved rounds of baseline time / tessera time (above 1: tessera faster)\n",
              s.rounds);
  report.header();
  TriadCeiling triad(s.quick ? (std::size_t{1} << 22) : (std::size_t{1} << 24));
  run_saxpy(report, s, triad);
  run_particles(report, s, triad);
  run_flux(report, s, triad);
#if defined(TESSERA_BENCH_HAVE_CUDA)
  run_cuda_kernels(report, s);
#endif
  report.write_json(args.json);
  if (any_mismatch()) {
    std::fprintf(stderr, "a tessera kernel's result differs from its baseline's (see MISMATCH above)\n");
    return 1;
  }
  return 0;
}
