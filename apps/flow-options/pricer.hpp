#pragma once
// Monte Carlo pricing of European options as a cyclic dataflow (Alea §5.2, figure 9). A set
// enters as one value, a Round, sent into the Approximator, and goes round once per round:
//
//   Approximator -iterate-> Splitter -block-> Random -> TerminalPrices -> PayoffMoments -> Accumulate
//        ^                     |-model-> TerminalPrices, PayoffMoments, Accumulate             |
//        |                     '-tally-> Accumulate                                            |
//        '------------------------------------- feedback --------------------------------------'
//   Approximator -output-> Quote: the set's prices and standard errors
//
// A round draws `paths_per_round` paths of every set still iterating; the Approximator sends a
// set round again until each of its prices has a standard error at or below the tolerance, or
// it has had `max_rounds` rounds. Every set of a price() call is in flight at once, each in its
// own input set; the prices depend only on the seed, the set's index and the options, not on the
// devices, the placement or the number of workers.
//
//   auto devices = tessera::DeviceSet::select("sim:2");
//   flow_options::MonteCarloPricer pricer(devices, {.paths_per_round = 1 << 16, .tolerance = 0.01});
//   std::vector<flow_options::SetQuote> quotes = pricer.price(sets);

#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>
#include <tessera/sched/executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "option_set.hpp"

namespace flow_options {

struct PricerOptions {
  std::size_t paths_per_round = std::size_t{1} << 16;
  /// A set leaves the cycle once every one of its prices has a standard error at or below this
  /// (absolute, in the currency of the spot); 0: run `max_rounds` rounds.
  double tolerance = 0.01;
  /// At most this many rounds per set (1 to 2^32 - 1); a set stopped here is not `converged`.
  std::size_t max_rounds = 1000;
  /// The key of the Philox generator.
  std::uint64_t seed = 1;
};

/// Where one set stands after a round.
struct Progress {
  std::size_t set = 0;
  std::uint64_t rounds = 0;
  std::uint64_t paths = 0;
  double max_standard_error = 0;
};
using ProgressCallback = std::function<void(const Progress&)>;

class MonteCarloPricer {
 public:
  /// Builds the flow. Throws tessera::Error for options it cannot run: no paths per round, no
  /// rounds, too many rounds, a negative or non-finite tolerance. `devices` must outlive it.
  MonteCarloPricer(tessera::DeviceSet& devices, const PricerOptions& options,
                   tessera::flow::FlowOptions flow_options = {});
  ~MonteCarloPricer();
  MonteCarloPricer(const MonteCarloPricer&) = delete;
  MonteCarloPricer& operator=(const MonteCarloPricer&) = delete;

  /// Prices every set, all in flight at once; quote i belongs to sets[i]. `progress` (may be
  /// empty) is called after every round of every set, one call at a time, on a worker. Throws
  /// tessera::Error for a set validate() rejects (before anything runs) or a failed firing.
  std::vector<SetQuote> price(std::span<const OptionSet> sets, ProgressCallback progress = {});

  const PricerOptions& options() const noexcept { return options_; }
  tessera::flow::Flow& flow() noexcept { return flow_; }

 private:
  struct Graph;
  PricerOptions options_;
  tessera::flow::Flow flow_;
  std::unique_ptr<Graph> graph_;
  std::vector<SetQuote> quotes_;
  ProgressCallback progress_;
};

}  // namespace flow_options
