// Built with OpenMP (bench/flow/options.cmake); nothing else in the benchmark is.
#include "options_openmp.hpp"

#include <tessera/flow/catalog/random.hpp>

#include <algorithm>
#include <cmath>

#include "flow-options/pricing_ops.hpp"

namespace flow_bench {

namespace {
constexpr std::size_t paths_per_chunk = 2048;  // the prices of a chunk stay in L1 across the options
}

OpenMpPricer::OpenMpPricer(std::size_t paths_per_round, std::size_t max_sets, std::size_t max_options)
    : paths_per_round_(paths_per_round),
      max_sets_(max_sets),
      max_options_(max_options),
      chunks_((paths_per_round + paths_per_chunk - 1) / paths_per_chunk),
      chunk_sums_(max_sets * chunks_ * 2 * max_options),
      totals_(max_sets * 2 * max_options),
      spot_(max_sets),
      drift_(max_sets),
      diffusion_(max_sets),
      strike_(max_sets * max_options),
      sign_(max_sets * max_options) {}

bool OpenMpPricer::has_openmp() noexcept {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

void OpenMpPricer::run(std::span<const flow_options::OptionSet> sets, std::size_t rounds, std::uint64_t seed) {
  const std::size_t num_sets = std::min(sets.size(), max_sets_);
  const std::size_t width = 2 * max_options_;
  for (std::size_t s = 0; s < num_sets; ++s) {
    spot_[s] = sets[s].spot;
    drift_[s] = flow_options::gbm_drift(sets[s]);
    diffusion_[s] = flow_options::gbm_diffusion(sets[s]);
    for (std::size_t k = 0; k < max_options_; ++k) {
      // Missing options pay nothing (a put at strike 0), so every set runs max_options_ wide.
      const flow_options::Payoff p =
          k < sets[s].options.size() ? flow_options::make_payoff(sets[s].options[k]) : flow_options::Payoff{0.0, -1.0};
      strike_[s * max_options_ + k] = p.strike;
      sign_[s * max_options_ + k] = p.sign;
    }
  }
  std::fill(totals_.begin(), totals_.end(), 0.0);
  const std::size_t tasks = num_sets * chunks_, paths = paths_per_round_, chunks = chunks_, options = max_options_;
  for (std::size_t round = 0; round < rounds; ++round) {
#pragma omp parallel for schedule(static)
    for (std::size_t task = 0; task < tasks; ++task) {
      const std::size_t s = task / chunks, ch = task % chunks;
      const std::uint64_t block = (static_cast<std::uint64_t>(s) << 32) | round;  // flow_options::random_block
      const std::size_t lo = ch * paths_per_chunk, hi = std::min(lo + paths_per_chunk, paths);
      double terminal[paths_per_chunk];
      const double spot = spot_[s], drift = drift_[s], diffusion = diffusion_[s];
      for (std::size_t i = lo; i < hi; ++i) {  // hot-loop: paths
        const double z = tessera::flow::philox_value<double>(seed, block, i, tessera::flow::Distribution::normal);
        terminal[i - lo] = spot * std::exp(drift + diffusion * z);
      }
      const std::size_t n = hi - lo;
      double* out = chunk_sums_.data() + task * width;
      for (std::size_t k = 0; k < options; ++k) {
        const double strike = strike_[s * options + k], sign = sign_[s * options + k];
        double sum = 0.0, sum_sq = 0.0;
#pragma omp simd reduction(+ : sum, sum_sq)
        for (std::size_t i = 0; i < n; ++i) {  // hot-loop: payoffs
          const double gain = sign * (terminal[i] - strike);
          const double p = gain > 0.0 ? gain : 0.0;
          sum += p;
          sum_sq += p * p;
        }
        out[k] = sum;
        out[options + k] = sum_sq;
      }
    }
    for (std::size_t s = 0; s < num_sets; ++s)
      for (std::size_t ch = 0; ch < chunks; ++ch) {
        const double* in = chunk_sums_.data() + (s * chunks + ch) * width;
        double* total = totals_.data() + s * width;
        for (std::size_t j = 0; j < width; ++j) total[j] += in[j];
      }
  }
  rounds_ = rounds;
}

std::vector<flow_options::SetQuote> OpenMpPricer::quotes(std::span<const flow_options::OptionSet> sets) const {
  std::vector<flow_options::SetQuote> out;
  for (std::size_t s = 0; s < std::min(sets.size(), max_sets_); ++s) {
    flow_options::Tally t;  // the flow pricer's formulas for the price and its standard error
    t.set = s;
    t.rounds = rounds_;
    t.paths = rounds_ * paths_per_round_;
    t.discount = std::exp(-sets[s].rate * sets[s].expiry);
    const double* total = totals_.data() + s * 2 * max_options_;
    for (std::size_t k = 0; k < sets[s].options.size(); ++k) {
      t.payoff_sum.push_back(total[k]);
      t.payoff_sum_sq.push_back(total[max_options_ + k]);
    }
    flow_options::SetQuote q;
    q.set = s;
    q.rounds = t.rounds;
    q.paths = t.paths;
    for (std::size_t k = 0; k < t.options(); ++k) {
      q.prices.push_back(t.price(k));
      q.standard_errors.push_back(t.standard_error(k));
    }
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace flow_bench
