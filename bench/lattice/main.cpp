// tessera-bench-lattice [--json FILE] [--quick]
// The binary collision of Ludwig's binary fluid (the targetDP paper's benchmark, §IV): targetDP
// kernels in SoA and AoSoA for VVL = 1, 2, 4, 8, 16, the same collision as a tessera::for_each
// over Tensors, and the paper's baseline (an OpenMP loop over sites with the inner loops over
// the 19 velocities), all timed in the same interleaved rounds with STREAM triad as the
// bandwidth ceiling. Every variant's result is checked against the baseline's first.

#include "lattice_bench.hpp"
#include "tensor_collision.hpp"

#include "common/quiet_baseline_threads.hpp"
#include "common/report.hpp"
#include "hot_loops.generated.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/targetdp.h>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace lattice_bench {
namespace {

using tessera::bench::Record;
using tessera::bench::Report;

// Bytes one collision moves per site: reads f, g (19 each), phi, grad (3), delsq; writes f, g, u (3).
constexpr double bytes_per_site = (19 + 19 + 1 + 3 + 1 + 19 + 19 + 3) * 8.0;

// The initial state, SoA: populations near rest with a little flow, an order parameter in [-0.05, 0.05].
struct State {
  std::size_t n;
  std::vector<double> f, g, phi, grad, delsq, u;
  explicit State(std::size_t sites) : n(sites), f(19 * n), g(19 * n), phi(n), grad(3 * n), delsq(n), u(3 * n, 0.0) {
    std::mt19937_64 rng(2014);
    std::uniform_real_distribution<double> noise(-1.0, 1.0);
    for (std::size_t s = 0; s < n; ++s) {
      phi[s] = 0.05 * noise(rng);
      delsq[s] = 0.01 * noise(rng);
      for (int a = 0; a < 3; ++a) grad[a * n + s] = 0.01 * noise(rng);
      for (int p = 0; p < 19; ++p) {
        f[p * n + s] = lb::wv[p] * (1.0 + 0.01 * noise(rng));
        g[p * n + s] = p == 0 ? phi[s] : 0.001 * noise(rng);
      }
    }
  }
};

// Target memory (targetMalloc), released at the end.
struct TargetArray {
  double* p = nullptr;
  explicit TargetArray(std::size_t n) { targetMalloc(reinterpret_cast<void**>(&p), n * sizeof(double)); }
  ~TargetArray() { tdp_free(p); }
  TargetArray(const TargetArray&) = delete;
  TargetArray& operator=(const TargetArray&) = delete;
};

// A layout: where population p (or component a of a 3-vector) of site s lives.
enum class Layout { aos, soa, aosoa };
std::size_t at(Layout l, std::size_t s, int p, int count, std::size_t n, int tile) {
  switch (l) {
    case Layout::aos: return s * count + p;
    case Layout::soa: return p * n + s;
    default: return (s / tile) * tile * count + static_cast<std::size_t>(p) * tile + s % tile;
  }
}

struct LayoutFields {
  Layout layout;
  int tile;
  TargetArray f, g, phi, grad, delsq, u;
  LayoutFields(const State& st, Layout l, int t)
      : layout(l), tile(t), f(19 * st.n), g(19 * st.n), phi(st.n), grad(3 * st.n), delsq(st.n), u(3 * st.n) {
    load(st);
  }
  void load(const State& st) {
    for (std::size_t s = 0; s < st.n; ++s) {
      for (int p = 0; p < 19; ++p) {
        f.p[at(layout, s, p, 19, st.n, tile)] = st.f[p * st.n + s];
        g.p[at(layout, s, p, 19, st.n, tile)] = st.g[p * st.n + s];
      }
      for (int a = 0; a < 3; ++a) grad.p[at(layout, s, a, 3, st.n, tile)] = st.grad[a * st.n + s];
      phi.p[s] = st.phi[s];
      delsq.p[s] = st.delsq[s];
    }
  }
  Fields fields(std::size_t n) const { return Fields{f.p, g.p, phi.p, grad.p, delsq.p, u.p, n}; }
  // The largest relative difference of f and g from the baseline's AoS result.
  double difference(const LayoutFields& aos, std::size_t n) const {
    double worst = 0;
    for (std::size_t s = 0; s < n; ++s)
      for (int p = 0; p < 19; ++p) {
        const double a = f.p[at(layout, s, p, 19, n, tile)], b = aos.f.p[at(Layout::aos, s, p, 19, n, 1)];
        const double c = g.p[at(layout, s, p, 19, n, tile)], d = aos.g.p[at(Layout::aos, s, p, 19, n, 1)];
        worst = std::max({worst, std::fabs(a - b) / std::max(std::fabs(b), 1e-300),
                          std::fabs(c - d) / std::max(std::fabs(d), 1e-3)});
      }
    return worst;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times every variant in `rounds` rounds, the order rotating each round; returns median seconds.
std::vector<double> interleaved(int rounds, const std::vector<std::function<void()>>& variants) {
  std::vector<std::vector<double>> t(variants.size());
  for (auto& v : variants) v();
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const std::size_t j = (k + static_cast<std::size_t>(r)) % variants.size();
      const auto a = std::chrono::steady_clock::now();
      variants[j]();
      t[j].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
  std::vector<double> med;
  for (auto& x : t) med.push_back(median(x));
  return med;
}

// The collision's fields as Tensors of records in layout L.
template <class L>
struct TensorFields {
  tessera::Tensor<lb::Populations<>, 3, L> f, g;
  tessera::Tensor<double, 3, L> phi, delsq;
  tessera::Tensor<lb::Vector3<>, 3, L> grad, u;
  std::size_t n;
  TensorFields(tessera::MemoryManager& memory, const State& st, int edge, bool long_rows = false)
      : f(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("f")),
        g(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("g")),
        phi(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("phi")),
        delsq(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("delsq")),
        grad(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("grad")),
        u(memory, extent(edge, long_rows), tessera::TensorOptions<3>{}.named("u")),
        n(st.n) {
    std::vector<lb::Populations<>> fh(n), gh(n);
    std::vector<lb::Vector3<>> gradh(n);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t p = 0; p < 19; ++p) {
        fh[s].get<0>()[p] = st.f[p * n + s];
        gh[s].get<0>()[p] = st.g[p * n + s];
      }
      for (std::size_t a = 0; a < 3; ++a) gradh[s].get<0>()[a] = st.grad[a * n + s];
    }
    f.fill_from(fh.data());
    g.fill_from(gh.data());
    grad.fill_from(gradh.data());
    phi.fill_from(st.phi.data());
    delsq.fill_from(st.delsq.data());
  }
  // The lattice as a cube, or as the same sites in rows 8 times longer (the collision is local
  // to a site, so the shape changes only how for_each's rows cut it).
  static tessera::Extent<3> extent(int edge, bool long_rows) {
    const auto e = static_cast<std::size_t>(edge);
    return long_rows ? tessera::Extent<3>{e * 8, e / 8, e} : tessera::Extent<3>{e, e, e};
  }
  void collide(tessera::Executor& executor, const lb::CollisionParameters& k) {
    tessera::for_each(executor, lb::CollideKernel{k}, f, g, tessera::read_only(phi), tessera::read_only(grad),
                      tessera::read_only(delsq), tessera::write_only(u));
  }
  // The largest relative difference of f from the baseline's AoS result.
  double difference(const LayoutFields& aos, std::size_t sites) {
    std::vector<lb::Populations<>> fh(sites);
    f.gather_to(fh.data());
    double worst = 0;
    for (std::size_t s = 0; s < sites; ++s)
      for (int p = 0; p < 19; ++p) {
        const double b = aos.f.p[s * 19 + p];
        worst = std::max(worst, std::fabs(fh[s].get<0>()[static_cast<std::size_t>(p)] - b) / std::fabs(b));
      }
    return worst;
  }
};

struct Variant {
  std::string name;
  std::function<void()> run;
};

int run_suite(int edge, int rounds, bool quick, const std::string& json);

int run(int argc, char** argv) {
  tessera::bench::rerun_with_environment(argv, {tessera::bench::passive_openmp});
  std::string json;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--quick]\n", argv[0]);
      return 2;
    }
  }
  targetInit("host");
  const int status = run_suite(quick ? 24 : 64, quick ? 3 : 15, quick, json);
  targetFinalize();
  return status;
}

int run_suite(int edge, int rounds, bool quick, const std::string& json) {
  const std::size_t n = static_cast<std::size_t>(edge) * edge * edge;
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("lattice suite: binary collision over %d^3 sites on %u hardware threads, targetDP target %s, "
              "baseline %s (OMP_WAIT_POLICY=%s)%s\n",
              edge, std::thread::hardware_concurrency(), tdp_target_name(),
              have_openmp() ? "with OpenMP" : "WITHOUT OpenMP (serial: ratios are not meaningful)",
              wait_policy ? wait_policy : "unset", quick ? " (quick)" : "");

  const State state(n);
  const lb::CollisionParameters k{1.0 / 0.51875, 1.0 / 0.51875, 2.0 / 8.5, -0.00625, 0.00625, 0.004};

  LayoutFields aos(state, Layout::aos, 1);
  for (double* p : {aos.f.p, aos.g.p}) (void)p;

  // The baseline's loops vectorise: the compiler says so, and its build with the vectoriser off
  // is slower.
  tessera::bench::print_hot_loops(tessera::bench::kBaselineHotLoops, tessera::bench::kBaselineCompiler);
  {
    LayoutFields scalar(state, Layout::aos, 1);
    const auto t = interleaved(rounds, {[&] { collide_sites(aos.fields(n), k); },
                                        [&] { collide_sites_scalar(scalar.fields(n), k); }});
    std::printf("baseline vectorised: %s (the same source built with -fno-tree-vectorize takes %.2fx its time)\n",
                t[1] > 1.15 * t[0] ? "yes" : "NO", t[1] / t[0]);
  }

  // Check every variant against the baseline from the same state, one collision each.
  aos.load(state);
  collide_sites(aos.fields(n), k);
  LayoutFields soa(state, Layout::soa, 1);
  std::vector<std::pair<std::string, TargetDpCollision>> soa_variants = {
      {"soa-vvl1", collide_soa_1}, {"soa-vvl2", collide_soa_2}, {"soa-vvl4", collide_soa_4},
      {"soa-vvl8", collide_soa_8}, {"soa-vvl16", collide_soa_16}};
  std::vector<std::pair<int, TargetDpCollision>> aosoa_variants = {
      {1, collide_aosoa_1}, {2, collide_aosoa_2}, {4, collide_aosoa_4}, {8, collide_aosoa_8}, {16, collide_aosoa_16}};
  bool mismatch = false;
  auto check = [&](const std::string& name, double diff) {
    if (diff > 1e-12) {
      std::printf("MISMATCH: %s differs from the baseline by %.3g (relative)\n", name.c_str(), diff);
      mismatch = true;
    }
  };
  for (auto& [name, collide] : soa_variants) {
    soa.load(state);
    collide(soa.fields(n), k);
    check(name, soa.difference(aos, n));
  }
  std::vector<std::unique_ptr<LayoutFields>> aosoa;
  for (auto& [tile, collide] : aosoa_variants) {
    aosoa.push_back(std::make_unique<LayoutFields>(state, Layout::aosoa, tile));
    collide(aosoa.back()->fields(n), k);
    check("aosoa-vvl" + std::to_string(tile), aosoa.back()->difference(aos, n));
  }

  // The Tensor collision: records on the host device, for_each on the executor, in the Strided
  // (SoA rows) and Tiled<8> (AoSoA) layouts.
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor& executor = tessera::default_executor();
  TensorFields<tessera::Strided> strided(memory, state, edge);
  TensorFields<tessera::Tiled<8>> tiled(memory, state, edge);
  TensorFields<tessera::Strided> strided_long(memory, state, edge, true);
  TensorFields<tessera::Tiled<8>> tiled_long(memory, state, edge, true);
  auto strided_collide = [&] { strided.collide(executor, k); };
  auto tiled_collide = [&] { tiled.collide(executor, k); };
  strided_collide();
  tiled_collide();
  check("tensor-strided", strided.difference(aos, n));
  check("tensor-tiled8", tiled.difference(aos, n));
  strided_long.collide(executor, k);
  tiled_long.collide(executor, k);
  check("tensor-strided-rows512", strided_long.difference(aos, n));
  check("tensor-tiled8-rows512", tiled_long.difference(aos, n));

  // STREAM triad over arrays as large as the lattice's f and g together.
  const std::size_t triad_n = 38 * n;
  std::vector<double> ta(triad_n), tb(triad_n), tc(triad_n);
  first_touch(ta.data(), triad_n);
  first_touch(tb.data(), triad_n);
  first_touch(tc.data(), triad_n);
  for (std::size_t i = 0; i < triad_n; ++i) tb[i] = 1.0, tc[i] = 2.0;

  std::vector<Variant> variants;
  variants.push_back({"baseline", [&] { collide_sites(aos.fields(n), k); }});
  for (auto& [name, collide] : soa_variants) variants.push_back({name, [&, c = collide] { c(soa.fields(n), k); }});
  for (std::size_t i = 0; i < aosoa_variants.size(); ++i)
    variants.push_back({"aosoa-vvl" + std::to_string(aosoa_variants[i].first),
                        [&, i] { aosoa_variants[i].second(aosoa[i]->fields(n), k); }});
  variants.push_back({"tensor-strided", strided_collide});
  variants.push_back({"tensor-tiled8", tiled_collide});
  variants.push_back({"tensor-strided-rows" + std::to_string(8 * edge), [&] { strided_long.collide(executor, k); }});
  variants.push_back({"tensor-tiled8-rows" + std::to_string(8 * edge), [&] { tiled_long.collide(executor, k); }});
  variants.push_back({"triad", [&] { stream_triad(ta.data(), tb.data(), tc.data(), 3.0, triad_n); }});
  std::vector<std::function<void()>> calls;
  for (auto& v : variants) calls.push_back(v.run);
  const std::vector<double> t = interleaved(rounds, calls);

  Report report("lattice");
  std::printf("rates: million site updates per second (median of %d interleaved rounds); ratio = rate / baseline rate\n",
              rounds);
  report.header();
  const std::string bench = "collision-" + std::to_string(edge) + "^3";
  const double base = n / t[0] * 1e-6;
  const double triad_gbs = 24.0 * triad_n / t.back() * 1e-9;
  report.add(Record{bench, "baseline", "rate", base, "Msite/s", "", 0});
  double best = 0;
  std::string best_name;
  for (std::size_t i = 1; i + 1 < variants.size(); ++i) {
    const double rate = n / t[i] * 1e-6;
    report.add(Record{bench, variants[i].name, "rate", rate, "Msite/s", "baseline", base});
    if (variants[i].name.rfind("tensor", 0) != 0 && rate > best) best = rate, best_name = variants[i].name;
  }
  report.add(Record{"stream-triad", "openmp", "bandwidth", triad_gbs, "GB/s", "", 0});
  const double best_bw = best * 1e6 * bytes_per_site * 1e-9;
  report.add(Record{bench, best_name, "bandwidth", best_bw, "GB/s", "triad", triad_gbs});
  // Each Tensor layout against the targetDP variant of the same layout and width.
  auto rate_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < variants.size(); ++i)
      if (variants[i].name == name) return n / t[i] * 1e-6;
    return 0.0;
  };
  report.add(Record{bench, "tensor-strided", "rate", rate_of("tensor-strided"), "Msite/s", "soa-vvl8",
                    rate_of("soa-vvl8")});
  report.add(Record{bench, "tensor-tiled8", "rate", rate_of("tensor-tiled8"), "Msite/s", "aosoa-vvl8",
                    rate_of("aosoa-vvl8")});
  const std::string rows = "-rows" + std::to_string(8 * edge);
  report.add(Record{bench, "tensor-strided" + rows, "rate", rate_of("tensor-strided" + rows), "Msite/s", "soa-vvl8",
                    rate_of("soa-vvl8")});
  report.add(Record{bench, "tensor-tiled8" + rows, "rate", rate_of("tensor-tiled8" + rows), "Msite/s", "aosoa-vvl8",
                    rate_of("aosoa-vvl8")});
  report.write_json(json);
  return mismatch ? 1 : 0;
}

}  // namespace
}  // namespace lattice_bench

int main(int argc, char** argv) { return lattice_bench::run(argc, argv); }
