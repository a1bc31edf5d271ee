#pragma once
// What the pricer takes and gives back: option sets (one underlying under Black-Scholes
// dynamics, many European options with the expiry of the set) and their quotes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flow_options {

enum class OptionKind { call, put };

/// A European option: pays max(S_T - strike, 0) (call) or max(strike - S_T, 0) (put) at expiry.
struct Option {
  OptionKind kind = OptionKind::call;
  double strike = 100;
};

/// One underlying and the options written on it, all expiring at `expiry`. The underlying
/// follows geometric Brownian motion under the risk-neutral measure.
struct OptionSet {
  double spot = 100;        ///< S0
  double rate = 0.05;       ///< continuously compounded risk-free rate r
  double volatility = 0.2;  ///< sigma, per year
  double expiry = 1;        ///< T, in years
  std::vector<Option> options;
};

/// Throws tessera::Error naming the field when `set` cannot be priced: a spot, volatility,
/// expiry or strike that is not a positive finite number, a rate that is not finite, no options.
/// `what` prefixes the message ("option set 2").
void validate(const OptionSet& set, const std::string& what = "option set");

/// The price of each option of a set, as the pricer found it.
struct SetQuote {
  std::size_t set = 0;                  ///< index of the set in the price() call
  std::vector<double> prices;           ///< discounted expected payoff, one per option, in order
  std::vector<double> standard_errors;  ///< of each price
  std::uint64_t rounds = 0;             ///< rounds of the cycle the set went through
  std::uint64_t paths = 0;              ///< paths simulated for the set
  /// Every standard error reached the tolerance; false when the set stopped at the most rounds.
  bool converged = false;
};

/// The sets the app and the benchmark price: set i has its own spot, volatility, rate and
/// expiry, and `options_per_set` options, calls and puts in pairs of one strike, with strikes
/// from deep in to deep out of the money (0.75 to 1.25 times the spot).
std::vector<OptionSet> example_sets(std::size_t sets, std::size_t options_per_set);

const char* to_string(OptionKind kind) noexcept;

}  // namespace flow_options
