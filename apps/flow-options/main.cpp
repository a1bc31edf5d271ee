// Monte Carlo pricing of European calls and puts as a cyclic dataflow (Alea §5.2), checked
// against the Black-Scholes closed form.
//
//   tessera-flow-options [--sets N] [--options N] [--paths N] [--tolerance X] [--max-rounds N]
//                        [--seed N] [--placement data_affine|per_input_set|host]
//
// Devices come from TESSERA_DEVICES (host when unset). Exits 1 when a price is more than 3
// standard errors from Black-Scholes, 2 for a bad command line.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "flow-options/black_scholes.hpp"
#include "flow-options/pricer.hpp"

namespace {

namespace flow = tessera::flow;
using flow_options::OptionSet;
using flow_options::SetQuote;

struct Settings {
  std::size_t sets = 4;
  std::size_t options = 16;
  flow_options::PricerOptions pricer{
      .paths_per_round = std::size_t{1} << 17, .tolerance = 0.01, .max_rounds = 200, .seed = 2024};
  flow::Placement placement = flow::Placement::data_affine;
};

struct UsageError {
  std::string message;
};

constexpr const char* usage =
    "usage: tessera-flow-options [--sets N] [--options N] [--paths N] [--tolerance X] [--max-rounds N] [--seed N]\n"
    "                            [--placement data_affine|per_input_set|host]\n"
    "  --sets N        option sets in flight at once (default 4)\n"
    "  --options N     options per set, calls and puts in pairs of one strike (default 16)\n"
    "  --paths N       paths per set per round (default 131072)\n"
    "  --tolerance X   stop a set once every price has a standard error <= X (default 0.01; 0: --max-rounds)\n"
    "  --max-rounds N  at most N rounds per set (default 200)\n"
    "  --seed N        key of the Philox generator (default 2024)\n"
    "  --placement P   where firings run (default data_affine)\n"
    "devices: TESSERA_DEVICES (host, sim:N, cuda, ...; default host)\n";

std::size_t positive_integer(std::string_view flag, std::string_view text) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v == 0)
    throw UsageError{std::string(flag) + " expects a positive integer, got '" + std::string(text) + "'"};
  return v;
}

std::uint64_t any_integer(std::string_view flag, std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw UsageError{std::string(flag) + " expects a non-negative integer, got '" + std::string(text) + "'"};
  return v;
}

double non_negative_number(std::string_view flag, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
    throw UsageError{std::string(flag) + " expects a non-negative number, got '" + std::string(text) + "'"};
  return v;
}

flow::Placement placement_named(std::string_view text) {
  if (text == "data_affine") return flow::Placement::data_affine;
  if (text == "per_input_set") return flow::Placement::per_input_set;
  if (text == "host") return flow::Placement::host;
  throw UsageError{"--placement must be data_affine, per_input_set or host, got '" + std::string(text) + "'"};
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") throw UsageError{};
    if (i + 1 >= argc) throw UsageError{std::string(flag) + " needs a value"};
    const std::string_view value = argv[++i];
    if (flag == "--sets")
      s.sets = positive_integer(flag, value);
    else if (flag == "--options")
      s.options = positive_integer(flag, value);
    else if (flag == "--paths")
      s.pricer.paths_per_round = positive_integer(flag, value);
    else if (flag == "--tolerance")
      s.pricer.tolerance = non_negative_number(flag, value);
    else if (flag == "--max-rounds")
      s.pricer.max_rounds = positive_integer(flag, value);
    else if (flag == "--seed")
      s.pricer.seed = any_integer(flag, value);
    else if (flag == "--placement")
      s.placement = placement_named(value);
    else
      throw UsageError{"unknown option '" + std::string(flag) + "'"};
  }
  return s;
}

// One line per sweep (a round of every set still iterating), at most ten a second.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::size_t sets) : latest_error_(sets, 0.0), paths_(sets, 0) {}
  void operator()(const flow_options::Progress& p) {
    std::lock_guard lock(mutex_);
    latest_error_[p.set] = p.max_standard_error;
    paths_[p.set] = p.paths;
    max_rounds_ = std::max(max_rounds_, p.rounds);
    if (++reports_ % latest_error_.size() != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (printed_ && now - last_ < std::chrono::milliseconds(100)) return;
    printed_ = true;
    last_ = now;
    std::uint64_t paths = 0;
    for (std::uint64_t n : paths_) paths += n;
    std::printf("  rounds %6llu (most per set %4llu)  paths %14llu  max standard error %.5f\n",
                static_cast<unsigned long long>(reports_), static_cast<unsigned long long>(max_rounds_),
                static_cast<unsigned long long>(paths), *std::max_element(latest_error_.begin(), latest_error_.end()));
    std::fflush(stdout);
  }

 private:
  std::mutex mutex_;
  std::vector<double> latest_error_;
  std::vector<std::uint64_t> paths_;
  std::uint64_t reports_ = 0, max_rounds_ = 0;
  bool printed_ = false;
  std::chrono::steady_clock::time_point last_;
};

const char* placement_name(flow::Placement p) {
  switch (p) {
    case flow::Placement::host:
      return "host";
    case flow::Placement::per_input_set:
      return "per_input_set";
    case flow::Placement::data_affine:
      return "data_affine";
  }
  return "?";
}

// Prints every price against Black-Scholes; returns how many lie within 3 standard errors.
std::size_t print_table(const std::vector<OptionSet>& sets, const std::vector<SetQuote>& quotes) {
  std::size_t within = 0;
  std::printf("\n%4s %5s %9s %12s %12s %10s %12s %7s\n", "set", "kind", "strike", "monte carlo", "std error", "",
              "black-schol.", "z");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const OptionSet& s = sets[i];
    const SetQuote& q = quotes[i];
    std::printf("set %zu: spot %.2f, rate %.3f, volatility %.3f, expiry %.2f; %llu rounds, %llu paths%s\n", i, s.spot,
                s.rate, s.volatility, s.expiry, static_cast<unsigned long long>(q.rounds),
                static_cast<unsigned long long>(q.paths), q.converged ? "" : " (stopped at --max-rounds)");
    for (std::size_t k = 0; k < s.options.size(); ++k) {
      const double exact = flow_options::black_scholes(s, s.options[k]);
      const double z = (q.prices[k] - exact) / q.standard_errors[k];
      const bool ok = std::abs(q.prices[k] - exact) <= 3.0 * q.standard_errors[k];
      within += ok ? 1 : 0;
      std::printf("%4zu %5s %9.3f %12.5f %12.5f %10s %12.5f %7.2f%s\n", i, flow_options::to_string(s.options[k].kind),
                  s.options[k].strike, q.prices[k], q.standard_errors[k], "", exact, z, ok ? "" : "  <-- off");
    }
  }
  return within;
}

int run(const Settings& s) {
  tessera::DeviceSet devices = tessera::DeviceSet::select();
  flow::FlowOptions flow_options;
  flow_options.placement = s.placement;
  flow_options::MonteCarloPricer pricer(devices, s.pricer, flow_options);
  const std::vector<OptionSet> sets = flow_options::example_sets(s.sets, s.options);

  std::printf(
      "flow-options: %zu sets x %zu options, %zu paths per round, tolerance %g, at most %zu rounds, seed %llu\n",
      s.sets, s.options, s.pricer.paths_per_round, s.pricer.tolerance, s.pricer.max_rounds,
      static_cast<unsigned long long>(s.pricer.seed));
  std::printf("devices: %s (%zu accelerator(s)); placement %s\n", devices.spec().c_str(), devices.num_accelerators(),
              placement_name(s.placement));
  ProgressPrinter printer(sets.size());
  const auto start = std::chrono::steady_clock::now();
  const std::vector<SetQuote> quotes = pricer.price(sets, [&](const flow_options::Progress& p) { printer(p); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::size_t within = print_table(sets, quotes);
  std::uint64_t paths = 0, rounds = 0;
  std::size_t converged = 0;
  double worst = 0;
  for (const SetQuote& q : quotes) {
    paths += q.paths;
    rounds += q.rounds;
    converged += q.converged ? 1 : 0;
    for (double e : q.standard_errors) worst = std::max(worst, e);
  }
  const auto stats = pricer.flow().stats();
  std::printf(
      "\n%llu rounds, %llu paths in %.3f s (%.1f M paths/s, %.1f M path-options/s); %zu/%zu sets converged, "
      "max standard error %.5f; %zu firings\n",
      static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(paths), seconds,
      static_cast<double>(paths) / seconds * 1e-6,
      static_cast<double>(paths) * static_cast<double>(s.options) / seconds * 1e-6, converged, quotes.size(), worst,
      stats.firings);
  const std::size_t total = s.sets * s.options;
  const bool pass = within == total;
  std::printf("check: %zu/%zu prices within 3 standard errors of Black-Scholes: %s\n", within, total,
              pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const UsageError& e) {
    if (!e.message.empty()) std::fprintf(stderr, "tessera-flow-options: %s\n", e.message.c_str());
    std::fputs(usage, e.message.empty() ? stdout : stderr);
    return e.message.empty() ? 0 : 2;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-flow-options: %s\n", e.what());
    return 2;
  }
}
