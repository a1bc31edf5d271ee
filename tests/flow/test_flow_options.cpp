// apps/flow-options: Monte Carlo prices against Black-Scholes, put-call parity, the same bits on
// every backend, several sets in flight kept apart, and the errors for bad input.

#include "flow_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>

#include <cmath>
#include <vector>

#include "flow-options/black_scholes.hpp"
#include "flow-options/pricer.hpp"

namespace flow = tessera::flow;
using flow_options::MonteCarloPricer;
using flow_options::Option;
using flow_options::OptionKind;
using flow_options::OptionSet;
using flow_options::PricerOptions;
using flow_options::SetQuote;

namespace {

// Calls and puts at strikes from deep in to deep out of the money.
OptionSet set_with_strikes(double spot, double volatility, double rate, double expiry) {
  OptionSet s{spot, rate, volatility, expiry, {}};
  for (double moneyness : {0.7, 0.9, 1.0, 1.1, 1.3}) {
    s.options.push_back(Option{OptionKind::call, spot * moneyness});
    s.options.push_back(Option{OptionKind::put, spot * moneyness});
  }
  return s;
}

// Three sets whose prices differ a lot: mixing their paths or tallies would show.
std::vector<OptionSet> distinct_sets() {
  return {set_with_strikes(100, 0.2, 0.03, 1.0), set_with_strikes(40, 0.45, 0.01, 0.5),
          set_with_strikes(250, 0.1, 0.06, 2.0)};
}

PricerOptions quick_options(double tolerance = 0.0, std::size_t max_rounds = 6) {
  return PricerOptions{.paths_per_round = 20000, .tolerance = tolerance, .max_rounds = max_rounds, .seed = 7};
}

void expect_within_three_errors(const OptionSet& set, const SetQuote& q, const char* what) {
  ASSERT_EQ(q.prices.size(), set.options.size());
  for (std::size_t k = 0; k < set.options.size(); ++k) {
    const double exact = flow_options::black_scholes(set, set.options[k]);
    EXPECT_GT(q.standard_errors[k], 0.0);
    EXPECT_LE(std::abs(q.prices[k] - exact), 3.0 * q.standard_errors[k])
        << what << ": " << flow_options::to_string(set.options[k].kind) << " at " << set.options[k].strike << " priced "
        << q.prices[k] << " +- " << q.standard_errors[k] << ", Black-Scholes " << exact;
  }
}

std::vector<SetQuote> price_on(const std::string& backend, flow::Placement placement,
                               const std::vector<OptionSet>& sets, const PricerOptions& options) {
  auto devices = tessera::DeviceSet::select(backend);
  flow::FlowOptions flow_options;
  flow_options.placement = placement;
  MonteCarloPricer pricer(devices, options, flow_options);
  return pricer.price(sets);
}

}  // namespace

TEST(FlowOptions, BlackScholesKnownValues) {
  // Hull's textbook example: S 42, K 40, r 10%, sigma 20%, T 0.5: call 4.76, put 0.81.
  const OptionSet s{42, 0.1, 0.2, 0.5, {}};
  EXPECT_NEAR(flow_options::black_scholes(s, {OptionKind::call, 40}), 4.7594, 1e-4);
  EXPECT_NEAR(flow_options::black_scholes(s, {OptionKind::put, 40}), 0.8086, 1e-4);
}

TEST(FlowOptions, CallsAndPutsWithinThreeStandardErrorsOfBlackScholes) {
  const std::vector<OptionSet> sets{set_with_strikes(100, 0.25, 0.04, 1.0)};
  auto devices = tessera::DeviceSet::select("host");
  MonteCarloPricer pricer(devices, quick_options(0.03, 200));
  std::size_t rounds_seen = 0;
  const auto quotes = pricer.price(sets, [&](const flow_options::Progress& p) {
    EXPECT_EQ(p.rounds, ++rounds_seen);
    EXPECT_EQ(p.paths, p.rounds * 20000);
  });
  ASSERT_EQ(quotes.size(), 1u);
  const SetQuote& q = quotes[0];
  EXPECT_TRUE(q.converged);
  EXPECT_EQ(q.rounds, rounds_seen);
  EXPECT_GT(q.rounds, 1u);  // the cycle really went round
  for (double e : q.standard_errors) EXPECT_LE(e, 0.03);
  expect_within_three_errors(sets[0], q, "set 0");

  // Put-call parity, C - P = S - K exp(-rT): the pair shares its paths, so the Monte Carlo gap
  // errs by far less than the sum of the two standard errors.
  const OptionSet& s = sets[0];
  for (std::size_t k = 0; k + 1 < s.options.size(); k += 2) {
    const double parity = s.spot - s.options[k].strike * std::exp(-s.rate * s.expiry);
    EXPECT_NEAR(q.prices[k] - q.prices[k + 1], parity, 3.0 * (q.standard_errors[k] + q.standard_errors[k + 1]))
        << "strike " << s.options[k].strike;
  }
}

TEST(FlowOptions, StopsAtMostRoundsWhenTheToleranceIsOutOfReach) {
  auto devices = tessera::DeviceSet::select("host");
  MonteCarloPricer pricer(devices, quick_options(1e-6, 3));
  const auto quotes = pricer.price(distinct_sets());
  for (const SetQuote& q : quotes) {
    EXPECT_FALSE(q.converged);
    EXPECT_EQ(q.rounds, 3u);
    EXPECT_EQ(q.paths, 60000u);
  }
}

TEST(FlowOptions, SeveralSetsInFlightEachMatchItsOwnClosedForm) {
  const auto sets = distinct_sets();
  auto devices = tessera::DeviceSet::select("sim:2");
  MonteCarloPricer pricer(devices, quick_options(0.05, 100));
  std::vector<std::size_t> reporting_sets;  // the set of each round, in the order rounds ended
  const auto quotes = pricer.price(sets, [&](const flow_options::Progress& p) { reporting_sets.push_back(p.set); });
  ASSERT_EQ(quotes.size(), sets.size());
  // The sets went round the cycle together: some set ended a round between two of another's.
  bool interleaved = false;
  for (std::size_t a = 0; a < reporting_sets.size() && !interleaved; ++a)
    for (std::size_t b = a + 1; b < reporting_sets.size() && reporting_sets[b] != reporting_sets[a]; ++b)
      for (std::size_t c = b + 1; c < reporting_sets.size() && !interleaved; ++c)
        interleaved = reporting_sets[c] == reporting_sets[a];
  EXPECT_TRUE(interleaved);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    EXPECT_EQ(quotes[i].set, i);
    EXPECT_TRUE(quotes[i].converged) << "set " << i;
    expect_within_three_errors(sets[i], quotes[i], ("set " + std::to_string(i)).c_str());
  }
  // Different sets need different numbers of rounds to converge, so they were at different
  // rounds while in flight together.
  EXPECT_NE(quotes[1].rounds, quotes[2].rounds);
}

TEST(FlowOptions, ASetsPricesDoNotDependOnItsNeighbours) {
  auto sets = distinct_sets();
  const auto before = price_on("sim:2", flow::Placement::data_affine, sets, quick_options());
  sets[1] = set_with_strikes(10, 0.9, 0.0, 3.0);  // the middle set changes entirely
  const auto after = price_on("sim:2", flow::Placement::data_affine, sets, quick_options());
  for (std::size_t i : {0u, 2u}) {
    EXPECT_EQ(before[i].prices, after[i].prices) << "set " << i;
    EXPECT_EQ(before[i].standard_errors, after[i].standard_errors) << "set " << i;
  }
  EXPECT_NE(before[1].prices, after[1].prices);
}

TEST(FlowOptions, SameBitsOnEveryBackendAndPlacement) {
  const auto sets = distinct_sets();
  const auto options = quick_options(0.05, 8);
  const auto reference = price_on("host", flow::Placement::data_affine, sets, options);
  struct Run {
    const char* backend;
    flow::Placement placement;
  };
  for (const Run& run : {Run{"sim:1", flow::Placement::data_affine}, Run{"sim:4", flow::Placement::data_affine},
                         Run{"sim:4", flow::Placement::per_input_set}, Run{"sim:4", flow::Placement::host}}) {
    const auto got = price_on(run.backend, run.placement, sets, options);
    ASSERT_EQ(got.size(), reference.size());
    for (std::size_t i = 0; i < sets.size(); ++i) {
      EXPECT_EQ(got[i].rounds, reference[i].rounds) << run.backend << " set " << i;
      EXPECT_EQ(got[i].prices, reference[i].prices) << run.backend << " set " << i;
      EXPECT_EQ(got[i].standard_errors, reference[i].standard_errors) << run.backend << " set " << i;
    }
  }
  // Another seed draws other paths.
  auto reseeded = options;
  reseeded.seed = 8;
  EXPECT_NE(price_on("host", flow::Placement::data_affine, sets, reseeded)[0].prices, reference[0].prices);
}

TEST(FlowOptions, ManySetsOnSimulatedDevices) {
  // The app's sets on two devices, with an executor that has a GPU-priority worker per device.
  const auto sets = flow_options::example_sets(8, 6);
  const auto options = quick_options(0.05, 100);
  const auto reference = price_on("host", flow::Placement::host, sets, options);
  auto devices = tessera::DeviceSet::select("sim:2");
  tessera::ExecutorOptions workers;
  workers.num_devices = devices.num_accelerators();
  tessera::Executor executor(workers);
  flow::FlowOptions flow_options;
  flow_options.placement = flow::Placement::per_input_set;
  flow_options.executor = &executor;
  MonteCarloPricer pricer(devices, options, flow_options);
  const auto quotes = pricer.price(sets);
  const auto stats = pricer.flow().stats();
  ASSERT_EQ(stats.firings_per_space.size(), 3u);
  EXPECT_GT(stats.firings_per_space[1], 0u);  // both devices priced sets
  EXPECT_GT(stats.firings_per_space[2], 0u);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    EXPECT_TRUE(quotes[i].converged) << "set " << i;
    EXPECT_EQ(quotes[i].prices, reference[i].prices) << "set " << i;
    expect_within_three_errors(sets[i], quotes[i], ("set " + std::to_string(i)).c_str());
  }
}

TEST(FlowOptions, OnePathPerRoundAndOneOptionStillPrice) {
  const std::vector<OptionSet> sets{OptionSet{100, 0.05, 0.2, 1.0, {Option{OptionKind::put, 95}}}};
  auto devices = tessera::DeviceSet::select("host");
  MonteCarloPricer pricer(devices, PricerOptions{.paths_per_round = 1, .tolerance = 0.0, .max_rounds = 5, .seed = 3});
  const auto quotes = pricer.price(sets);
  EXPECT_EQ(quotes[0].paths, 5u);
  EXPECT_TRUE(std::isfinite(quotes[0].standard_errors[0]));
}

TEST(FlowOptions, BadInputIsATesseraError) {
  auto devices = tessera::DeviceSet::select("host");
  EXPECT_THROW(MonteCarloPricer(devices, PricerOptions{.paths_per_round = 0}), tessera::Error);
  EXPECT_THROW(MonteCarloPricer(devices, PricerOptions{.max_rounds = 0}), tessera::Error);
  EXPECT_THROW(MonteCarloPricer(devices, PricerOptions{.tolerance = -0.1}), tessera::Error);
  EXPECT_THROW(MonteCarloPricer(devices, PricerOptions{.tolerance = std::nan("")}), tessera::Error);

  MonteCarloPricer pricer(devices, quick_options());
  auto expect_rejected = [&](OptionSet bad, const std::string& words) {
    std::vector<OptionSet> sets{set_with_strikes(100, 0.2, 0.03, 1.0), std::move(bad)};
    try {
      pricer.price(sets);
      ADD_FAILURE() << "no error for a set with " << words;
    } catch (const tessera::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("option set 1"), std::string::npos) << e.what();
    }
  };
  OptionSet s = set_with_strikes(100, 0.2, 0.03, 1.0);
  s.volatility = -0.2;
  expect_rejected(s, "volatility");
  s = set_with_strikes(100, 0.2, 0.03, 1.0);
  s.spot = 0;
  expect_rejected(s, "spot");
  s = set_with_strikes(100, 0.2, 0.03, 1.0);
  s.expiry = -1;
  expect_rejected(s, "expiry");
  s = set_with_strikes(100, 0.2, 0.03, 1.0);
  s.options[3].strike = -5;
  expect_rejected(s, "strike");
  s.options.clear();
  expect_rejected(s, "no options");
  // The pricer still prices after refusing.
  EXPECT_EQ(pricer.price(distinct_sets()).size(), 3u);
}
