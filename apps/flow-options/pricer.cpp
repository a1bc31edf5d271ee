#include "pricer.hpp"

#include <tessera/core/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "pricing_ops.hpp"

namespace flow_options {

namespace {

void check_options(const PricerOptions& o) {
  if (o.paths_per_round == 0) throw tessera::Error("flow-options: paths per round must be at least 1, got 0");
  if (o.max_rounds == 0) throw tessera::Error("flow-options: the most rounds must be at least 1, got 0");
  if (o.max_rounds >= (std::size_t{1} << 32))
    throw tessera::Error(fmt::format("flow-options: the most rounds must be below 2^32, got {}", o.max_rounds));
  if (!(std::isfinite(o.tolerance) && o.tolerance >= 0))
    throw tessera::Error(
        fmt::format("flow-options: the tolerance must be a finite number of at least 0, got {}", o.tolerance));
}

// How far a set is from done, as the Approximator measures it: its largest standard error over
// the tolerance, so that "at or below 1" means every price is precise enough. The previous
// round's value plays no part: a Monte Carlo estimate is steady when its error is small, not when
// two rounds happen to agree. A set that reaches the most rounds leaves as it is (AtLimit::emit).
double precision_measure(const Round& next, double tolerance) {
  const Tally& t = std::get<2>(next);
  if (tolerance == 0.0) return std::numeric_limits<double>::infinity();
  return t.max_standard_error() / tolerance;
}

}  // namespace

namespace flow = tessera::flow;

struct MonteCarloPricer::Graph {
  flow::Approximator<Round>& approximator;
  flow::Splitter<std::uint64_t, SetModel, Tally>& splitter;
  flow::Random<double>& normals;
  TerminalPrices& terminal_prices;
  PayoffMoments& moments;
  Accumulate& accumulate;
  Quote& quote;
};

MonteCarloPricer::MonteCarloPricer(tessera::DeviceSet& devices, const PricerOptions& options,
                                   flow::FlowOptions flow_options)
    : options_((check_options(options), options)), flow_(devices, std::move(flow_options)) {
  const double tolerance = options_.tolerance;
  const std::size_t max_rounds = options_.max_rounds;
  graph_ = std::make_unique<Graph>(Graph{
      flow_.add<flow::Approximator<Round>>(
          "steady", [=](const Round&, const Round& next) { return precision_measure(next, tolerance); }, 1.0,
          max_rounds, flow::AtLimit::emit),
      flow_.add<flow::Splitter<std::uint64_t, SetModel, Tally>>("round"),
      flow_.add<flow::Random<double>>("normals", options_.paths_per_round, options_.seed, flow::Distribution::normal),
      flow_.add<TerminalPrices>(),
      flow_.add<PayoffMoments>(),
      flow_.add<Accumulate>(options_.paths_per_round),
      flow_.add<Quote>(tolerance),
  });
  Graph& g = *graph_;
  flow::connect(g.approximator.iterate, g.splitter.input);
  flow::connect(g.splitter.first, g.normals.request);
  flow::connect(g.normals.output, g.terminal_prices.normals);
  flow::connect(g.splitter.second, g.terminal_prices.model);
  flow::connect(g.terminal_prices.output, g.moments.terminal_prices);
  flow::connect(g.splitter.second, g.moments.model);
  flow::connect(g.moments.output, g.accumulate.moments);
  flow::connect(g.splitter.second, g.accumulate.model);
  flow::connect(g.splitter.third, g.accumulate.tally);
  flow::connect(g.accumulate.output, g.approximator.feedback);
  flow::connect(g.approximator.output, g.quote.input);
  // Callbacks of one output run one at a time, in order; price() reads after Flow::wait.
  flow_.on_receive(g.quote.output, [this](const SetQuote& q) { quotes_.at(q.set) = q; });
  flow_.on_receive(g.accumulate.output, [this](const Round& r) {
    if (!progress_) return;
    const Tally& t = std::get<2>(r);
    progress_(Progress{t.set, t.rounds, t.paths, t.max_standard_error()});
  });
}

MonteCarloPricer::~MonteCarloPricer() = default;

std::vector<SetQuote> MonteCarloPricer::price(std::span<const OptionSet> sets, ProgressCallback progress) {
  for (std::size_t i = 0; i < sets.size(); ++i) validate(sets[i], fmt::format("option set {}", i));
  if (sets.size() >= (std::size_t{1} << 32))
    throw tessera::Error(fmt::format("flow-options: at most 2^32 - 1 sets per call, got {}", sets.size()));
  quotes_.assign(sets.size(), SetQuote{});
  progress_ = std::move(progress);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const OptionSet& s = sets[i];
    Tally tally;
    tally.set = i;
    tally.discount = std::exp(-s.rate * s.expiry);
    tally.payoff_sum.assign(s.options.size(), 0.0);
    tally.payoff_sum_sq.assign(s.options.size(), 0.0);
    flow_.send(graph_->approximator.input, Round{random_block(i, 0), make_model(flow_, s), std::move(tally)},
               flow_.new_input_set());
  }
  try {
    flow_.wait();
  } catch (...) {
    progress_ = nullptr;
    throw;
  }
  progress_ = nullptr;
  for (std::size_t i = 0; i < sets.size(); ++i)
    if (quotes_[i].rounds == 0)
      throw tessera::Error(fmt::format("flow-options: option set {} never left the pricing cycle", i));
  return std::move(quotes_);
}

}  // namespace flow_options
