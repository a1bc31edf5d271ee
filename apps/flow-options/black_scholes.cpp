#include "black_scholes.hpp"

#include <cmath>

namespace flow_options {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double black_scholes(const OptionSet& set, const Option& option) {
  const double s = set.spot, k = option.strike, r = set.rate, t = set.expiry;
  const double vol_sqrt_t = set.volatility * std::sqrt(t);
  const double d1 = (std::log(s / k) + (r + 0.5 * set.volatility * set.volatility) * t) / vol_sqrt_t;
  const double d2 = d1 - vol_sqrt_t;
  const double discounted_strike = k * std::exp(-r * t);
  if (option.kind == OptionKind::call) return s * normal_cdf(d1) - discounted_strike * normal_cdf(d2);
  return discounted_strike * normal_cdf(-d2) - s * normal_cdf(-d1);
}

}  // namespace flow_options
