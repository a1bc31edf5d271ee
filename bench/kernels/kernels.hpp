#pragma once
// Shared by the SUITE=kernels benchmarks: interleaved timing of a tessera variant against its
// baselines, the STREAM triad ceiling measured in the same rounds, and how a row is reported.

#include "common/report.hpp"
#include "common/stream.hpp"

#include <tessera/layout/layout.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace tessera::bench {

/// V for Tiled<V>, 0 for the other layouts.
template <typename L>
constexpr std::size_t tile_width() {
  if constexpr (is_tiled<L>::value)
    return L::width;
  else
    return 0;
}

struct Settings {
  bool quick = false;
  int rounds = 7;  ///< paired rounds per comparison (after one warm-up call of each variant)
};

/// Set when a tessera variant's result differs from its baseline's; main exits non-zero.
inline bool& any_mismatch() {
  static bool failed = false;
  return failed;
}
inline void mismatch(const std::string& what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
  any_mismatch() = true;
}

/// Times named variants in `rounds` rounds, each calling every variant once in an order that
/// rotates from round to round (so drift and cache state hit all of them alike), after one
/// warm-up call of each. times[v][k] is variant v's time in round k.
struct Interleaved {
  std::vector<std::string> names;
  std::vector<std::vector<double>> times;

  static Interleaved run(int rounds, std::vector<std::pair<std::string, std::function<void()>>> variants) {
    Interleaved r;
    const std::size_t n = variants.size();
    r.times.assign(n, {});
    for (auto& v : variants) {
      r.names.push_back(v.first);
      v.second();
    }
    for (int k = 0; k < rounds; ++k)
      for (std::size_t j = 0; j < n; ++j) {
        auto& [name, f] = variants[(j + static_cast<std::size_t>(k)) % n];
        const auto t0 = std::chrono::steady_clock::now();
        f();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.times[(j + static_cast<std::size_t>(k)) % n].push_back(s);
      }
    return r;
  }
  std::size_t index(const std::string& name) const {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }
  double best(const std::string& name) const {
    const auto& t = times[index(name)];
    return *std::min_element(t.begin(), t.end());
  }
  /// The round whose time ratio of `a` to `b` is the median: both GB/s come from that round, so
  /// the reported ratio is the median of per-round ratios and drift between rounds cancels.
  std::size_t median_round(const std::string& a, const std::string& b) const {
    const auto& ta = times[index(a)];
    const auto& tb = times[index(b)];
    std::vector<std::pair<double, std::size_t>> r;
    for (std::size_t k = 0; k < ta.size(); ++k) r.push_back({tb[k] / ta[k], k});
    std::sort(r.begin(), r.end());
    return r[r.size() / 2].second;
  }
};

/// Adds `variant` against `baseline`: both as GB/s of `bytes` useful traffic, from the round
/// whose ratio is the median of the per-round ratios.
inline void report_pair(Report& report, const std::string& benchmark, const Interleaved& r, const std::string& variant,
                        const std::string& baseline, double bytes) {
  const std::size_t k = r.median_round(variant, baseline);
  const double v = bytes / r.times[r.index(variant)][k] / 1e9;
  const double b = bytes / r.times[r.index(baseline)][k] / 1e9;
  report.add({benchmark, variant, "bandwidth", v, "GB/s", baseline, b, 0});
}

/// The variant's best GB/s against the best STREAM triad of the same rounds.
inline void report_vs_stream(Report& report, const std::string& benchmark, const Interleaved& r,
                             const std::string& variant, double bytes, double triad_bytes) {
  report.add({benchmark, variant, "best/stream", bytes / r.best(variant) / 1e9, "GB/s", "stream-triad",
              triad_bytes / r.best("stream-triad") / 1e9, 0});
}

void run_saxpy(Report& report, const Settings& s, StreamArrays& triad);
void run_particles(Report& report, const Settings& s, StreamArrays& triad);
void run_flux(Report& report, const Settings& s, StreamArrays& triad);
void run_jacobi(Report& report, const Settings& s, StreamArrays& triad);
#if defined(TESSERA_BENCH_HAVE_CUDA)
/// GPU rows (CUDA builds): prints why and returns where there is no GPU.
void run_cuda_kernels(Report& report, const Settings& s);
#endif

}  // namespace tessera::bench
