// 2-D Euler flux difference with the FORCE flux (Ripple §7.3, Table 4): for every cell of an
// n x n grid, sum_d F(i+1/2) - F(i-1/2) from its four neighbours (it.offset(d, +-1)), in every
// tessera layout (as written, forced inline, and with read_only/write_only arguments) against
// hand-written AoS and SoA OpenMP loops over arrays with a one-cell halo.
// The padding holds a ZeroGradient boundary loaded once before timing. Both sides call the same
// flux_difference (euler.hpp); results must agree to a relative 1e-5.
#include "baselines.hpp"
#include "euler.hpp"
#include "kernels.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace tessera::bench {

namespace {

using T = float;  // Ripple's Table 4 is in single precision
constexpr T kDtDx = T(0.1);

/// The initial state, the baselines' arrays (halo filled as ZeroGradient) and their outputs.
struct FluxBaselines {
  std::size_t n;
  std::vector<Fluid<T>> dense;  // n x n, for Tensor::fill_from
  std::vector<baseline::FluidAoS<T>> aos_in, aos_out;
  std::vector<T> soa_in_data, soa_out_data;
  baseline::FluidSoA<T> soa_in{}, soa_out{};

  explicit FluxBaselines(std::size_t n_) : n(n_), dense(initial_state<T>(n)), aos_in((n + 2) * (n + 2)), aos_out(n * n) {
    const std::size_t w = n + 2, cells = w * w;
    soa_in_data.resize(4 * cells);
    soa_out_data.resize(4 * n * n);
    T* p = soa_in_data.data();
    soa_in = {p, p + cells, p + 2 * cells, p + 3 * cells};
    T* q = soa_out_data.data();
    soa_out = {q, q + n * n, q + 2 * n * n, q + 3 * n * n};
    // Corners are never read by the stencil.
    for (std::size_t j = 0; j < w; ++j)
      for (std::size_t i = 0; i < w; ++i) {
        const Fluid<T>& f = dense[zero_gradient_source(n, j) * n + zero_gradient_source(n, i)];
        const std::size_t k = j * w + i;
        aos_in[k] = {f.density(), f.energy(), f.u(), f.v()};
        soa_in.rho[k] = f.density(), soa_in.e[k] = f.energy(), soa_in.u[k] = f.u(), soa_in.v[k] = f.v();
      }
  }
};

/// The hand-written AoSoA loop's arrays for tiles of V cells (baselines.hpp, flux_aosoa), its
/// input filled from the same state and halo as the other baselines.
struct AoSoAFluid {
  std::size_t n = 0, v = 0;
  std::vector<T> in, out;
  AoSoAFluid() = default;
  AoSoAFluid(const FluxBaselines& base, std::size_t v_) : n(base.n), v(v_) {
    const std::size_t tiles = n / v, row = (tiles + 2) * 4 * v;
    in.assign((n + 2) * row, T(0));
    out.assign(n * tiles * 4 * v, T(0));
    // Input column c of a row is x = c - v (the halo tile holds x in [-v, 0)); x = -1 and x = n
    // are the halo cells the stencil reads, the rest of the halo tiles is never read.
    for (std::size_t j = 0; j < n + 2; ++j)
      for (std::size_t c = v - 1; c <= n + v; ++c) {
        const std::size_t i = c - (v - 1);  // the halo'd arrays' column: 0 is x = -1
        const baseline::FluidAoS<T>& f = base.aos_in[j * (n + 2) + i];
        T* tile = in.data() + j * row + (c / v) * 4 * v + c % v;
        tile[0] = f.rho, tile[v] = f.e, tile[2 * v] = f.u, tile[3 * v] = f.v;
      }
  }
  /// Component m (rho, e, mx, my) of cell k (x fastest) of the result.
  T result(std::size_t k, std::size_t m) const {
    const std::size_t x = k % n, y = k / n;
    return out[y * (n / v) * 4 * v + (x / v) * 4 * v + m * v + x % v];
  }
};

bool close(T a, T b, T floor) { return std::abs(a - b) <= T(1e-5) * std::max({std::abs(a), std::abs(b), floor}); }

/// One cell: the state's four neighbours through it.offset(dim, +-1), the result into d.
template <typename It, typename Out>
__attribute__((always_inline)) inline void flux_kernel(const It& c, const Out& d, T dtdx) {
  auto load = [](const It& it) __attribute__((always_inline)) {
    const auto f = *it;
    return conserved(f.density(), f.energy(), f.u(), f.v());
  };
  const Conserved<T> r = flux_difference(load(c), load(c.offset(0, -1)), load(c.offset(0, 1)), load(c.offset(1, -1)),
                                         load(c.offset(1, 1)), dtdx);
  auto o = *d;
  o.density() = r.rho;
  o.energy() = r.e;
  o.u() = r.mx;
  o.v() = r.my;
}

template <typename L>
void run_layout(Report& report, const Settings& s, StreamArrays& triad, Executor& ex, MemoryManager& memory,
                FluxBaselines& base, const char* layout_name) {
  const std::size_t n = base.n;
  TensorOptions<2> o;
  o.with_padding(1);
  Tensor<Fluid<T>, 2, L> u(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("state"));
  Tensor<Fluid<T>, 2, L> out(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("flux-difference"));
  Tensor<Fluid<T>, 2, L> out_inl(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("flux-difference-inlined"));
  Tensor<Fluid<T>, 2, L> out_acc(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("flux-difference-access"));
  u.fill_from(base.dense.data());
  u.load_boundary(ZeroGradient{});

  // The kernel as a user writes it, and the same body forced inline (see the README: GCC does
  // not inline the plain lambda into for_each's `omp simd` strip, so that loop stays scalar).
  auto kernel = [](auto c, auto d, T dtdx) { flux_kernel(c, d, dtdx); };
  auto inlined = [](auto c, auto d, T dtdx) __attribute__((always_inline)) { flux_kernel(c, d, dtdx); };
  std::vector<std::pair<std::string, std::function<void()>>> variants = {
      {"tessera", [&] { for_each(ex, kernel, u, out, kDtDx); }},
      {"inlined", [&] { for_each(ex, inlined, u, out_inl, kDtDx); }},
      // With the arguments' access declared, as OPS has its users do: Tiled tiles of the state
      // are then staged a tile ahead and never copied back, and the output is not staged.
      {"access", [&] { for_each(ex, inlined, read_only(u), write_only(out_acc), kDtDx); }},
      {"openmp-aos", [&] { baseline::flux_aos(base.aos_in.data(), base.aos_out.data(), n, kDtDx); }},
      {"openmp-soa", [&] { baseline::flux_soa(base.soa_in, base.soa_out, n, kDtDx); }},
      {"stream-triad", [&] { triad.triad(); }}};
  // Tiled<V> also against the same layout written by hand: what the layout costs, apart from tessera.
  constexpr std::size_t V = tile_width<L>();
  AoSoAFluid aosoa;
  if constexpr (V > 0) {
    aosoa = AoSoAFluid(base, V);
    variants.push_back(
        {"openmp-aosoa", [&] { baseline::flux_aosoa<T, V>(aosoa.in.data(), aosoa.out.data(), n, kDtDx); }});
  }
  const auto r = Interleaved::run(s.rounds, std::move(variants));
  // Useful traffic: read the state, write the difference (each once; neighbours hit cache).
  const double bytes = 2.0 * 4 * sizeof(T) * static_cast<double>(n * n);
  const std::string name = "force-flux-" + std::to_string(n) + "^2";
  const std::string variant = std::string("tessera-") + layout_name;
  const std::string variant_inl = variant + "-inlined";
  const std::string variant_acc = variant + "-read-only-write-only";
  auto renamed = r;
  renamed.names[renamed.index("tessera")] = variant;
  renamed.names[renamed.index("inlined")] = variant_inl;
  renamed.names[renamed.index("access")] = variant_acc;
  report_pair(report, name, renamed, variant, "openmp-aos", bytes);
  report_pair(report, name, renamed, variant, "openmp-soa", bytes);
  report_pair(report, name, renamed, variant_inl, "openmp-aos", bytes);
  report_pair(report, name, renamed, variant_inl, "openmp-soa", bytes);
  report_pair(report, name, renamed, variant_acc, "openmp-soa", bytes);
  report_pair(report, name, renamed, variant_acc, variant_inl, bytes);
  if constexpr (V > 0) {
    report_pair(report, name, renamed, variant, "openmp-aosoa", bytes);
    report_pair(report, name, renamed, variant_acc, "openmp-aosoa", bytes);
  }
  report_vs_stream(report, name, renamed, variant, bytes, triad.triad_bytes());
  report_vs_stream(report, name, renamed, variant_inl, bytes, triad.triad_bytes());
  report_vs_stream(report, name + "/" + layout_name, renamed, "openmp-aos", bytes, triad.triad_bytes());
  report_vs_stream(report, name + "/" + layout_name, renamed, "openmp-soa", bytes, triad.triad_bytes());

  // Relative 1e-5 per value, floored at 1e-5 of each field's largest magnitude so that
  // differences which cancel to near zero do not count the rounding of their terms.
  std::vector<Fluid<T>> got(n * n), got_inl(n * n), got_acc(n * n);
  out.gather_to(got.data());
  out_inl.gather_to(got_inl.data());
  out_acc.gather_to(got_acc.data());
  T floor[4] = {0, 0, 0, 0};
  for (const auto& a : base.aos_out) {
    floor[0] = std::max(floor[0], std::abs(a.rho)), floor[1] = std::max(floor[1], std::abs(a.e));
    floor[2] = std::max(floor[2], std::abs(a.u)), floor[3] = std::max(floor[3], std::abs(a.v));
  }
  for (std::size_t k = 0; k < n * n; ++k) {
    const auto& a = base.aos_out[k];
    const T t[4] = {got[k].density(), got[k].energy(), got[k].u(), got[k].v()};
    const T b[4] = {a.rho, a.e, a.u, a.v};
    const T c[4] = {base.soa_out.rho[k], base.soa_out.e[k], base.soa_out.u[k], base.soa_out.v[k]};
    const T i[4] = {got_inl[k].density(), got_inl[k].energy(), got_inl[k].u(), got_inl[k].v()};
    const T w[4] = {got_acc[k].density(), got_acc[k].energy(), got_acc[k].u(), got_acc[k].v()};
    for (int m = 0; m < 4; ++m) {
      const T h = V > 0 ? aosoa.result(k, static_cast<std::size_t>(m)) : b[m];
      if (!close(t[m], b[m], floor[m]) || !close(c[m], b[m], floor[m]) || !close(i[m], b[m], floor[m]) ||
          !close(w[m], b[m], floor[m]) || !close(h, b[m], floor[m])) {
        mismatch(name + " " + variant + ": cell " + std::to_string(k) + " component " + std::to_string(m) + ": tessera " +
                 std::to_string(t[m]) + ", OpenMP AoS " + std::to_string(b[m]) + ", OpenMP SoA " + std::to_string(c[m]) +
                 ", inlined " + std::to_string(i[m]) + ", read_only/write_only " + std::to_string(w[m]) +
                 ", OpenMP AoSoA " + std::to_string(h));
        return;
      }
    }
  }
}

}  // namespace

void run_flux(Report& report, const Settings& s, StreamArrays& triad) {
  Executor ex;
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  const std::vector<std::size_t> sizes = s.quick ? std::vector<std::size_t>{512, 1024}
                                                 : std::vector<std::size_t>{1024, 2048, 4096};
  for (std::size_t n : sizes) {
    // All the suite's rounds at every size (a 4096^2 round of all variants takes about a second):
    // with 3-5 rounds the medians moved by up to 0.3 between runs.
    const Settings& f = s;
    FluxBaselines base(n);
    run_layout<Contiguous>(report, f, triad, ex, memory, base, "contiguous");
    run_layout<Strided>(report, f, triad, ex, memory, base, "strided");
    run_layout<Tiled<8>>(report, f, triad, ex, memory, base, "tiled8");
    run_layout<Tiled<16>>(report, f, triad, ex, memory, base, "tiled16");
  }
}

}  // namespace tessera::bench
