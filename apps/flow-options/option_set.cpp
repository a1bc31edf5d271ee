#include "option_set.hpp"

#include <tessera/core/error.hpp>

#include <fmt/format.h>

#include <cmath>

namespace flow_options {

namespace {

void require_positive(double value, const std::string& what, const char* field) {
  if (!(std::isfinite(value) && value > 0))
    throw tessera::Error(fmt::format("{}: the {} must be a positive finite number, got {}", what, field, value));
}

}  // namespace

void validate(const OptionSet& set, const std::string& what) {
  require_positive(set.spot, what, "spot");
  require_positive(set.volatility, what, "volatility");
  require_positive(set.expiry, what, "expiry");
  if (!std::isfinite(set.rate))
    throw tessera::Error(fmt::format("{}: the rate must be finite, got {}", what, set.rate));
  if (set.options.empty()) throw tessera::Error(fmt::format("{}: it holds no options; give it at least one", what));
  for (std::size_t k = 0; k < set.options.size(); ++k)
    require_positive(set.options[k].strike, fmt::format("{}, option {}", what, k), "strike");
}

std::vector<OptionSet> example_sets(std::size_t sets, std::size_t options_per_set) {
  std::vector<OptionSet> out(sets);
  const std::size_t strikes = (options_per_set + 1) / 2;
  for (std::size_t i = 0; i < sets; ++i) {
    OptionSet& s = out[i];
    // Parameters cycle with coprime periods, so neighbouring sets differ in every one of them.
    s.spot = 100.0 * (0.85 + 0.1 * static_cast<double>(i % 4));
    s.volatility = 0.15 + 0.05 * static_cast<double>(i % 3);
    s.rate = 0.01 + 0.02 * static_cast<double>(i % 5);
    s.expiry = 0.5 + 0.25 * static_cast<double>(i % 2);
    s.options.reserve(options_per_set);
    for (std::size_t k = 0; k < options_per_set; ++k) {
      const std::size_t pair = k / 2;
      const double moneyness =
          strikes <= 1 ? 1.0 : 0.75 + 0.5 * static_cast<double>(pair) / static_cast<double>(strikes - 1);
      s.options.push_back(Option{k % 2 == 0 ? OptionKind::call : OptionKind::put, s.spot * moneyness});
    }
  }
  return out;
}

const char* to_string(OptionKind kind) noexcept { return kind == OptionKind::call ? "call" : "put"; }

}  // namespace flow_options
