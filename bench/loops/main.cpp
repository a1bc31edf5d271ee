// tessera-bench-loops [--json FILE] [--quick] [--only jacobi|seven|launch|hybrid|cloverleaf|stream]
// (environment: TESSERA_BENCH_JACOBI_N grid size, TESSERA_BENCH_TILE_ROWS tile height)
// par_loop chains on the host against the same chains hand-written with OpenMP (baselines.cpp),
// timed in interleaved rounds in the same run; the cost of one small par_loop; and balanced
// splits over unequal simulated devices against the sum of their speeds. Exits 1 when
// a tessera result differs from its baseline's.
#include "baselines.hpp"
#include "cloverleaf.hpp"

#include "common/quiet_baseline_threads.hpp"
#include "common/report.hpp"
#include "common/stream.hpp"
#include "hot_loops.generated.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tl = tessera::loops;
using tessera::bench::Record;
using tessera::bench::Report;

bool mismatch = false;

std::vector<double> random_field(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// Median of the per-round ratio baseline / tessera, and both medians.
template <class T, class B>
void interleaved(Report& report, const std::string& name, const std::string& variant, const std::string& baseline,
                 double bytes_per_run, int rounds, T&& tessera_run, B&& baseline_run) {
  std::vector<double> tt, tb;
  tessera_run();
  baseline_run();
  for (int r = 0; r < rounds; ++r) {
    auto a = std::chrono::steady_clock::now();
    tessera_run();
    auto b = std::chrono::steady_clock::now();
    baseline_run();
    auto c = std::chrono::steady_clock::now();
    tt.push_back(std::chrono::duration<double>(b - a).count());
    tb.push_back(std::chrono::duration<double>(c - b).count());
  }
  std::sort(tt.begin(), tt.end());
  std::sort(tb.begin(), tb.end());
  const double t = tt[tt.size() / 2], base = tb[tb.size() / 2];
  report.add(Record{name, variant, "bandwidth", bytes_per_run / t / 1e9, "GB/s", baseline, bytes_per_run / base / 1e9});
}

// One Jacobi problem (u, u2, f) in a context, and its chain of `iterations` Jacobi + copy pairs.
struct JacobiChain {
  JacobiChain(tl::Context& c, int size, const std::vector<double>& init, const std::vector<double>& rhs)
      : context(c), n(size), grid(c, 2, "grid"), u(grid, shape(size), "u"), u2(grid, shape(size), "u2"),
        f(grid, shape(size), "f") {
    u.assign(init);
    u2.assign(init);
    f.assign(rhs);
  }
  static tl::Shape shape(int size) { return {.size = {size, size, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}; }
  void run(int iterations, double dx, double dy) {
    const tl::Stencil zero(2, {{0, 0, 0}}, "00");
    const tl::Stencil five(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "5pt");
    const tl::Range interior = tl::Range::of(2, {0, n, 0, n});
    for (int it = 0; it < iterations; ++it) {
      tl::par_loop(
          [](tl::Acc<double> out, tl::Acc<const double> in, tl::Acc<const double> ff, const double& hx, const double& hy) {
            out(0, 0) = ((in(-1, 0) + in(1, 0)) * hx * hx + (in(0, -1) + in(0, 1)) * hy * hy - hx * hx * hy * hy * ff(0, 0)) /
                        (2.0 * (hx * hx + hy * hy));
          },
          "jacobi", grid, interior, tl::write(u2, zero), tl::read(u, five), tl::read(f, zero), tl::gbl(dx), tl::gbl(dy));
      tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in) { out(0, 0) = in(0, 0); }, "copy", grid, interior,
                   tl::write(u, zero), tl::read(u2, zero));
    }
    context.execute();
  }
  tl::Context& context;
  int n;
  tl::Block grid;
  tl::Dataset<double> u, u2, f;
};

void run_jacobi(Report& report, bool quick, int rounds, tl::Context& plain, tl::Context& tiled) {
  const char* size = std::getenv("TESSERA_BENCH_JACOBI_N");
  // 4096²: three arrays of 134 MB, beyond the 260 MiB L3 the development VM reports.
  const int n = size ? std::atoi(size) : quick ? 1024 : 4096, iterations = 10;
  const double dx = 0.01, dy = 0.01;
  const std::size_t elements = std::size_t(n + 2) * (n + 2);
  const auto init = random_field(elements), rhs = random_field(elements + 1);
  const std::vector<double> f_values(rhs.begin(), rhs.begin() + std::ptrdiff_t(elements));
  JacobiChain a(plain, n, init, f_values), b(tiled, n, init, f_values);
  std::vector<double> bu = init, bu2 = init, bf = f_values;
  // Per iteration: Jacobi reads u and f, writes u2; the copy reads u2, writes u (interior).
  const double bytes = double(iterations) * 5.0 * double(n) * n * sizeof(double);
  const std::string name = "jacobi2d-" + std::to_string(n) + "-x10";
  auto openmp = [&] { loops_baseline::jacobi_chain(bu.data(), bu2.data(), bf.data(), n, n, iterations, dx, dy); };
  interleaved(report, name, "tessera", "openmp", bytes, rounds, [&] { a.run(iterations, dx, dy); }, openmp);
  interleaved(report, name, "tessera-tiled", "openmp", bytes, rounds, [&] { b.run(iterations, dx, dy); }, openmp);
  interleaved(report, name, "tessera-tiled", "tessera", bytes, rounds, [&] { b.run(iterations, dx, dy); },
              [&] { a.run(iterations, dx, dy); });
  std::printf("(tiled: %zu tiles of %d rows per chain)\n", tiled.last_tiles(), tiled.last_tile_rows());
  // Every side ran the chain the same number of times.
  const auto got = a.u.fetch();
  if (got != bu || b.u.fetch() != bu) {
    std::printf("MISMATCH: jacobi2d tessera, tiled and OpenMP results differ\n");
    mismatch = true;
  }
}

void run_seven(Report& report, bool quick, int rounds, tl::Context& context) {
  const int n = quick ? 96 : 192, iterations = 5;
  tl::Block cube(context, 3, "cube");
  const tl::Shape shape{.size = {n, n, n}, .d_m = {-1, -1, -1}, .d_p = {1, 1, 1}};
  tl::Dataset<double> a(cube, shape, "a"), b(cube, shape, "b");
  // Small values, so that the ping-pong stays finite for every round.
  auto init = random_field(a.elements());
  for (double& x : init) x *= 1e-30;
  a.assign(init);
  b.assign(init);
  std::vector<double> ba = init, bb = init;
  const tl::Stencil zero(3, {{0, 0, 0}}, "000");
  const tl::Stencil seven(3, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}, "7pt");
  const tl::Range interior = tl::Range::of(3, {0, n, 0, n, 0, n});
  auto kernel = [](tl::Acc<double> out, tl::Acc<const double> in) {
    out(0, 0, 0) = -6.0 * in(0, 0, 0) + in(1, 0, 0) + in(-1, 0, 0) + in(0, 1, 0) + in(0, -1, 0) + in(0, 0, 1) + in(0, 0, -1);
  };
  auto chain = [&] {
    for (int it = 0; it < iterations; ++it) {
      tl::par_loop(kernel, "b=L(a)", cube, interior, tl::write(b, zero), tl::read(a, seven));
      tl::par_loop(kernel, "a=L(b)", cube, interior, tl::write(a, zero), tl::read(b, seven));
    }
    context.execute();
  };
  const double bytes = double(iterations) * 2.0 * 2.0 * double(n) * n * n * sizeof(double);
  interleaved(report, "7pt3d-" + std::to_string(n) + "-x10", "tessera", "openmp", bytes, rounds, chain,
              [&] { loops_baseline::seven_point_chain(ba.data(), bb.data(), n, iterations); });
  if (a.fetch() != ba) {
    std::printf("MISMATCH: 7pt3d tessera and OpenMP results differ\n");
    mismatch = true;
  }
}

void run_launch(Report& report, bool quick, tl::Context& context) {
  tl::Block grid(context, 2, "small");
  tl::Dataset<double> u(grid, {.size = {8, 8, 1}}, "u");
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  const tl::Range all = tl::Range::of(2, {0, 8, 0, 8});
  const int loops = quick ? 2000 : 20000;
  auto one = [&] { tl::par_loop([](tl::Acc<double> v) { v(0, 0) += 1.0; }, "inc", grid, all, tl::rw(u, zero)); };
  const double each = tessera::bench::median_seconds([&] {
    for (int i = 0; i < loops; ++i) {
      one();
      context.execute();
    }
  }, 3) / loops;
  report.add(Record{"launch-8x8", "run-each", "per-loop", each * 1e6, "us", "", 0});
  const double chained = tessera::bench::median_seconds([&] {
    for (int i = 0; i < loops; ++i) one();
    context.execute();
  }, 3) / loops;
  report.add(Record{"launch-8x8", "chain-of-all", "per-loop", chained * 1e6, "us", "", 0});
}

// Balanced splits on unequal simulated devices against the ideal: the sum of the participants'
// throughputs. A device of speed 1 in `sim:2:speed=1,4` does a quarter of what the fastest does,
// and the fastest is a sim device alone (`sim:1`), so the ideal is that rate times 1 + 1/4.
// Two chains: Jacobi (memory-bound: the simulated devices share this machine's memory bus, which
// real devices would not) and a compute-bound stencil (the devices' model holds).
struct HybridChain {
  HybridChain(tl::Context& c, int size, bool compute_bound)
      : context(c), n(size), heavy(compute_bound), grid(c, 2, "grid"), u(grid, JacobiChain::shape(size), "u"),
        v(grid, JacobiChain::shape(size), "v") {
    const auto init = random_field(std::size_t(n + 2) * (n + 2));
    u.assign(init);
    v.assign(init);
  }
  void run(int iterations) {
    const tl::Stencil zero(2, {{0, 0, 0}}, "00");
    const tl::Stencil five(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "5pt");
    const tl::Range interior = tl::Range::of(2, {0, n, 0, n});
    for (int it = 0; it < iterations; ++it) {
      if (heavy) {
        tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in) {
          double x = 0.2 * (in(-1, 0) + in(1, 0) + in(0, -1) + in(0, 1) + in(0, 0));
          for (int k = 0; k < 48; ++k) x = x * 0.999 + 1e-4;  // per-site work of a heavier kernel
          out(0, 0) = x;
        }, "smooth", grid, interior, tl::write(v, zero), tl::read(u, five));
      } else {
        tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in) {
          out(0, 0) = 0.25 * (in(-1, 0) + in(1, 0) + in(0, -1) + in(0, 1));
        }, "jacobi", grid, interior, tl::write(v, zero), tl::read(u, five));
      }
      tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in) { out(0, 0) = in(0, 0); }, "copy", grid, interior,
                   tl::write(u, zero), tl::read(v, zero));
    }
    context.execute();
  }
  tl::Context& context;
  int n;
  bool heavy;
  tl::Block grid;
  tl::Dataset<double> u, v;
};

double hybrid_rate(const std::string& spec, const tl::ContextOptions& options, int n, int chains, bool heavy) {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  HybridChain h(context, n, heavy);
  for (int c = 0; c < 6; ++c) h.run(2);  // the balancer learns the split
  const double seconds = tessera::bench::median_seconds([&] {
    for (int c = 0; c < chains; ++c) h.run(2);
  }, 3);
  return double(chains) * 2.0 * double(n) * n / seconds / 1e6;
}

/// STREAM triad with OpenMP over arrays far beyond the caches: the bandwidth effective-bandwidth
/// rows are held against (the best of 10, as STREAM reports).
double stream_triad_gbs(bool quick) {
  tessera::bench::StreamArrays stream(quick ? std::size_t{1} << 22 : std::size_t{1} << 24);
  double best = 1e30;
  for (int r = 0; r < 10; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    stream.triad();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return stream.triad_bytes() / best / 1e9;
}

// CloverLeaf's clover_bm_short deck (960 x 960 cells): time per step, and effective bandwidth
// (the bytes each loop must move, Context::bytes_required, over the time) against STREAM triad
// measured in the same run; untiled and with the automatic tile height.
void run_cloverleaf(Report& report, bool quick) {
  const cloverleaf::Deck deck = cloverleaf::read_deck(TESSERA_CLOVERLEAF_DECKS "/clover_bm_short.in");
  const int steps = quick ? 10 : 87;
  const double triad = stream_triad_gbs(quick);
  report.add(Record{"stream-triad", "openmp", "bandwidth", triad, "GB/s", "", 0});
  auto devices = tessera::DeviceSet::select("host");
  for (bool tiled : {false, true}) {
    tessera::Executor executor;
    tl::Context context(devices, executor, {.tiled = tiled});
    cloverleaf::Solver solver(context, deck);
    solver.advance();  // the first step builds its graphs and touches every page
    const std::uint64_t bytes_before = context.bytes_required();
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 1; s < steps && !solver.finished(); ++s) solver.advance();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double gbs = double(context.bytes_required() - bytes_before) / seconds / 1e9;
    const std::string name = "cloverleaf-bm_short-" + std::to_string(steps) + "-steps";
    const std::string variant = tiled ? "tessera-tiled" : "tessera";
    report.add(Record{name, variant, "effective-bandwidth", gbs, "GB/s", "stream-triad", triad});
    report.add(Record{name, variant, "per-step", seconds / (steps - 1) * 1e3, "ms", "", 0});
    std::printf("(%s: %d steps in %.2f s, %.3g cell-steps/s; the Fortran/OpenMP reference is quoted at 7.5-7.8 s "
                "for 87 steps on this VM)\n",
                variant.c_str(), steps - 1, seconds, 960.0 * 960.0 * (steps - 1) / seconds);
  }
}

void run_hybrid(Report& report, bool quick) {
  const int n = quick ? 512 : 1024, chains = quick ? 5 : 20;
  for (bool heavy : {false, true}) {
    const std::string name = std::string(heavy ? "hybrid-compute-" : "hybrid-jacobi-") + std::to_string(n);
    const double fastest = hybrid_rate("sim:1", {}, n, chains, heavy);
    report.add(Record{name, "sim:1", "throughput", fastest, "Mcell/s", "", 0});
    for (double slow : {4.0, 16.0})
      for (bool each_loop : {true, false}) {
        const std::string spec = "sim:2:speed=1," + std::to_string(int(slow));
        report.add(Record{name, spec + (each_loop ? "" : " per-chain"), "throughput",
                          hybrid_rate(spec, {.split_each_loop = each_loop}, n, chains, heavy), "Mcell/s",
                          "ideal (sum of speeds)", fastest * (1.0 + 1.0 / slow)});
      }
    // OPS's tiled hybrid scheme: one overlapped tile per device a chain (two steps).
    for (double slow : {4.0, 16.0}) {
      const std::string spec = "sim:2:speed=1," + std::to_string(int(slow));
      report.add(Record{name, spec + " overlapped", "throughput",
                        hybrid_rate(spec, {.overlapped_tiles = true}, n, chains, heavy), "Mcell/s",
                        "ideal (sum of speeds)", fastest * (1.0 + 1.0 / slow)});
    }
    // The CPU workers beside one device: on a machine whose cores also run the device's stream
    // thread the sum of the two alone over-states what they can do together.
    const double host = hybrid_rate("host", {}, n, chains, heavy);
    report.add(Record{name, "host", "throughput", host, "Mcell/s", "", 0});
    report.add(Record{name, "sim:1 hybrid", "throughput", hybrid_rate("sim:1", {.hybrid = true}, n, chains, heavy),
                      "Mcell/s", "host + sim:1 alone", host + fastest});
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera::bench;
  rerun_with_environment(argv, {passive_openmp});
  const Args args = parse_args(argc, argv);
  const int rounds = args.quick ? 3 : 7;
  Report report("loops");
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("loops suite on %u hardware threads, baselines %s (OMP_WAIT_POLICY=%s)%s\n",
              std::thread::hardware_concurrency(),
              loops_baseline::have_openmp() ? "with OpenMP" : "WITHOUT OpenMP (serial: ratios are not meaningful)",
              wait_policy ? wait_policy : "unset", args.quick ? " (quick)" : "");
  print_hot_loops(kBaselineHotLoops, kBaselineCompiler);
  std::printf("ratios: median tessera bandwidth / median OpenMP bandwidth over %d interleaved rounds (above 1: tessera faster)\n",
              rounds);
  report.header();
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  // TESSERA_BENCH_TILE_ROWS=N sets the tile height (default: chosen from the cache size).
  const char* rows = std::getenv("TESSERA_BENCH_TILE_ROWS");
  tl::Context tiled(devices, executor, {.tiled = true, .tile_rows = rows ? std::atoi(rows) : 0});
  if (args.runs("jacobi")) run_jacobi(report, args.quick, rounds, context, tiled);
  if (args.runs("seven")) run_seven(report, args.quick, rounds, context);
  if (args.runs("launch")) run_launch(report, args.quick, context);
  if (args.runs("hybrid")) run_hybrid(report, args.quick);
  if (args.runs("cloverleaf")) run_cloverleaf(report, args.quick);
  else if (args.runs("stream")) report.add(Record{"stream-triad", "openmp", "bandwidth", stream_triad_gbs(args.quick), "GB/s", "", 0});
  report.write_json(args.json);
  if (mismatch) {
    std::fprintf(stderr, "a tessera chain's result differs from its baseline's (see MISMATCH above)\n");
    return 1;
  }
  return 0;
}
