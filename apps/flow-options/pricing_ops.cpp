#include "pricing_ops.hpp"

#include <tessera/core/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace flow_options {

namespace {

// max(g, 0) written (g + |g|) / 2: exact for every finite g, and free of the branch that keeps
// GCC -O2 from vectorising the loop.
TESSERA_HOST_DEVICE inline double payoff_at(double terminal_price, double strike, double sign) {
  const double gain = sign * (terminal_price - strike);
  return 0.5 * (gain + fabs(gain));
}

}  // namespace

double gbm_drift(const OptionSet& set) { return (set.rate - 0.5 * set.volatility * set.volatility) * set.expiry; }
double gbm_diffusion(const OptionSet& set) { return set.volatility * std::sqrt(set.expiry); }
Payoff make_payoff(const Option& option) { return Payoff{option.strike, option.kind == OptionKind::call ? 1.0 : -1.0}; }

SetModel make_model(flow::Flow& flow, const OptionSet& set) {
  std::vector<Payoff> payoffs;
  payoffs.reserve(set.options.size());
  for (const Option& o : set.options) payoffs.push_back(make_payoff(o));
  return SetModel{set.spot, gbm_drift(set), gbm_diffusion(set), flow::Vector<Payoff>(flow, payoffs)};
}

std::uint64_t random_block(std::size_t stream, std::uint64_t round) {
  constexpr std::uint64_t limit = std::uint64_t{1} << 32;
  if (stream >= limit || round >= limit)
    throw tessera::Error(
        fmt::format("flow-options: set {} round {}: sets and rounds must be below 2^32", stream, round));
  return (static_cast<std::uint64_t>(stream) << 32) | round;
}

double Tally::price(std::size_t k) const {
  return paths == 0 ? 0.0 : discount * payoff_sum[k] / static_cast<double>(paths);
}

double Tally::standard_error(std::size_t k) const {
  if (paths < 2) return std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(paths);
  const double mean = payoff_sum[k] / n;
  const double variance = std::max(0.0, (payoff_sum_sq[k] - payoff_sum[k] * mean) / (n - 1));
  return discount * std::sqrt(variance / n);
}

double Tally::max_standard_error() const {
  double worst = 0;
  for (std::size_t k = 0; k < options(); ++k) worst = std::max(worst, standard_error(k));
  return worst;
}

void TerminalPrices::fire(flow::Context& c) {
  const auto& z = c.get(normals);
  const SetModel& m = c.get(model);
  auto [prices, out] = c.allocate<double>(z.shape());
  const double* in = c.read(z);
  const double spot = m.spot, drift = m.drift, diffusion = m.diffusion;
  c.launch("paths", z.size(),
           [=] TESSERA_HOST_DEVICE(std::size_t i) { out[i] = spot * exp(drift + diffusion * in[i]); });
  c.emit(output, std::move(prices));
}

void PayoffMoments::fire(flow::Context& c) {
  const auto& s = c.get(terminal_prices);
  const SetModel& m = c.get(model);
  const std::size_t paths = s.size(), options = m.payoffs.size();
  const std::size_t chunks = (paths + paths_per_chunk - 1) / paths_per_chunk;
  auto [partials, per_chunk_sums] = c.allocate<double>(std::array<std::size_t, 1>{chunks * 2 * options});
  auto [moments, out] = c.allocate<double>(std::array<std::size_t, 1>{2 * options});
  const double* price = c.read(s);
  const Payoff* payoff = c.read(m.payoffs);
  constexpr std::size_t chunk = paths_per_chunk;
  c.launch("chunks", chunks, [=] TESSERA_HOST_DEVICE(std::size_t ch) {
    // Independent sums, one per lane, vectorised across the lanes: each lane adds its paths in
    // order, so vector and scalar code give the same bits. (Unmarked, GCC vectorises the loop
    // over i instead and runs 5x slower.)
    constexpr std::size_t lanes = 8;
    const std::size_t lo = ch * chunk;
    const std::size_t hi = lo + chunk < paths ? lo + chunk : paths;
    double* sums = per_chunk_sums + ch * 2 * options;
    for (std::size_t k = 0; k < options; ++k) {
      const double strike = payoff[k].strike, sign = payoff[k].sign;
      double sum[lanes] = {}, sum_sq[lanes] = {};
      std::size_t i = lo;
      for (; i + lanes <= hi; i += lanes) {
#pragma omp simd
        for (std::size_t l = 0; l < lanes; ++l) {
          const double p = payoff_at(price[i + l], strike, sign);
          sum[l] += p;
          sum_sq[l] += p * p;
        }
      }
      for (std::size_t l = 0; i < hi; ++i, ++l) {
        const double p = payoff_at(price[i], strike, sign);
        sum[l] += p;
        sum_sq[l] += p * p;
      }
      double total = 0.0, total_sq = 0.0;
      for (std::size_t l = 0; l < lanes; ++l) total += sum[l], total_sq += sum_sq[l];
      sums[k] = total;
      sums[options + k] = total_sq;
    }
  });
  const std::size_t width = 2 * options;
  c.launch("join", width, [=] TESSERA_HOST_DEVICE(std::size_t j) {
    double total = 0.0;
    for (std::size_t ch = 0; ch < chunks; ++ch) total += per_chunk_sums[ch * width + j];
    out[j] = total;
  });
  c.emit(output, std::move(moments));
}

void Accumulate::fire(flow::Context& c) {
  const auto& round_moments = c.get(moments);
  Tally next = c.get(tally);
  const std::size_t options = next.options();
  if (round_moments.size() != 2 * options)
    throw tessera::Error(fmt::format("flow-options: set {} has {} options but its round brought {} sums (2 per option)",
                                     next.set, options, round_moments.size()));
  const double* m = c.read(round_moments);  // on the host: waits for the device that made them
  for (std::size_t k = 0; k < options; ++k) {
    next.payoff_sum[k] += m[k];
    next.payoff_sum_sq[k] += m[options + k];
  }
  ++next.rounds;
  next.paths += paths_per_round_;
  const std::uint64_t block = random_block(next.set, next.rounds);
  c.emit(output, Round{block, c.get(model), std::move(next)});
}

void Quote::fire(flow::Context& c) {
  const Tally& t = std::get<2>(c.get(input));
  SetQuote q;
  q.set = t.set;
  q.rounds = t.rounds;
  q.paths = t.paths;
  for (std::size_t k = 0; k < t.options(); ++k) {
    q.prices.push_back(t.price(k));
    q.standard_errors.push_back(t.standard_error(k));
  }
  q.converged = t.max_standard_error() <= tolerance_;
  c.emit(output, std::move(q));
}

}  // namespace flow_options
