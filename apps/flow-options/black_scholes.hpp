#pragma once
// The Black-Scholes closed form for European calls and puts: what the Monte Carlo prices are
// checked against.

#include "option_set.hpp"

namespace flow_options {

/// The standard normal distribution function.
double normal_cdf(double x);

/// The price of `option` on the underlying of `set` (spot, rate, volatility, expiry).
double black_scholes(const OptionSet& set, const Option& option);

}  // namespace flow_options
