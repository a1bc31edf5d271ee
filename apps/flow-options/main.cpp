// Monte Carlo pricing of European calls and puts as a cyclic dataflow (Alea §5.2), checked
// against the Black-Scholes closed form.
//
//   tessera-flow-options [--sets N] [--options N] [--paths N] [--tolerance X] [--max-rounds N]
//                        [--seed N] [--placement data_affine|per_input_set|host]
//   tessera-flow-options --config run.toml    (the same options as `sets = 3` lines; --help lists them)
//
// Devices come from TESSERA_DEVICES (unset: every GPU found, else the host). Exits 1 when a
// price is more than 3 standard errors from Black-Scholes, 2 for a bad command line.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera_app/cli.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
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

void add_options(CLI::App& app, Settings& s, std::string& placement) {
  tessera_app::add_standard_options(app);
  app.add_option("--sets", s.sets, "option sets in flight at once")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(1, 4096));
  app.add_option("--options", s.options, "options per set, calls and puts in pairs of one strike")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--paths", s.pricer.paths_per_round, "paths per set per round")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  app.add_option("--tolerance", s.pricer.tolerance,
                 "stop a set once every price has a standard error <= X (0: run --max-rounds rounds)")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 1000));
  app.add_option("--max-rounds", s.pricer.max_rounds, "at most N rounds per set")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  app.add_option("--seed", s.pricer.seed, "key of the Philox generator")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  app.add_option("--placement", placement, "where firings run (per_input_set keeps each set on one device)")
      ->capture_default_str()
      ->check(tessera_app::not_an_option)
      ->check(CLI::IsMember({"data_affine", "per_input_set", "host"}));
}

flow::Placement placement_named(const std::string& text) {
  if (text == "per_input_set") return flow::Placement::per_input_set;
  if (text == "host") return flow::Placement::host;
  return flow::Placement::data_affine;
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
  Settings settings;
  std::string placement = "data_affine";
  CLI::App app{
      "Monte Carlo pricing of European calls and puts as a cyclic dataflow (Alea 5.2), checked against "
      "Black-Scholes",
      "tessera-flow-options"};
  add_options(app, settings, placement);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  settings.placement = placement_named(placement);
  try {
    return run(settings);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-flow-options: %s\n", e.what());
    return 2;
  }
}
