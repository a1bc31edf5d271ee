#pragma once
// The custom operations of the pricing cycle (Alea figure 9) and the values that travel between
// them. One round of a set:
//
//   Random (catalog)   request: the round's block        -> P standard normals
//   TerminalPrices     normals, model                     -> P terminal prices S_T (PathGen)
//   PayoffMoments      terminal prices, model             -> per option: sum of payoffs, of their squares
//   Accumulate         moments, model, tally              -> the next Round (the tally with this round added)
//
// Everything a set needs travels with it round the cycle in one value, a Round, so sets in
// flight at once never share state: the Splitter at the head of the cycle hands its parts to the
// operations, and every join downstream pairs values that left that Splitter in one firing.

#include <tessera/flow.hpp>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "option_set.hpp"

namespace flow_options {

namespace flow = tessera::flow;

/// One option's payoff at expiry, max(sign * (S_T - strike), 0): sign +1 for a call, -1 for a put.
struct Payoff {
  double strike;
  double sign;
};

/// What the per-path operations need of a set: the law of its terminal price,
/// S_T = spot * exp(drift + diffusion * z) with z standard normal, and the payoffs of its options.
struct SetModel {
  double spot = 0;
  double drift = 0;      ///< (r - sigma^2 / 2) T
  double diffusion = 0;  ///< sigma sqrt(T)
  flow::Vector<Payoff> payoffs;
};

/// The model of `set`, its payoffs an array of `flow` (copied to a device once, when first read there).
SetModel make_model(flow::Flow& flow, const OptionSet& set);
double gbm_drift(const OptionSet& set);
double gbm_diffusion(const OptionSet& set);
Payoff make_payoff(const Option& option);

/// A set's sums over every path so far. It goes round the cycle with the set, so the
/// accumulation needs no state in any operation.
struct Tally {
  std::size_t set = 0;  ///< index of the set in the price() call; also its random stream
  std::uint64_t rounds = 0;
  std::uint64_t paths = 0;
  double discount = 1;                ///< exp(-r T)
  std::vector<double> payoff_sum;     ///< per option, undiscounted
  std::vector<double> payoff_sum_sq;  ///< per option, of the squared payoffs

  std::size_t options() const noexcept { return payoff_sum.size(); }
  /// The discounted mean payoff of option k.
  double price(std::size_t k) const;
  /// The standard error of price(k); infinite before two paths.
  double standard_error(std::size_t k) const;
  double max_standard_error() const;
};

/// What enters the cycle and goes round it once per round: the block of normals the next round
/// draws (Random's request), the set's model and its tally so far.
using Round = std::tuple<std::uint64_t, SetModel, Tally>;

/// The block of random numbers of round `round` of the set with stream `stream`: Philox's
/// counter is (path, block), so every (stream, round) draws numbers of its own. Both must be
/// below 2^32.
std::uint64_t random_block(std::size_t stream, std::uint64_t round);

/// PathGen: S_T[i] = spot * exp(drift + diffusion * z[i]).
class TerminalPrices : public flow::Operation {
 public:
  flow::InputPort<flow::Vector<double>> normals{*this, "normals"};
  flow::InputPort<SetModel> model{*this, "model"};
  flow::OutputPort<flow::Vector<double>> output{*this, "output"};

  TerminalPrices() : Operation("terminal prices") {}
  void fire(flow::Context& c) override;
};

/// Per option k of the set: output[k] = sum over paths of payoff_k(S_T), output[K + k] = sum
/// of its square. Paths are cut into chunks of a fixed size, each folded over fixed lanes, and
/// the chunks joined in order: the same bits on the host, a simulated device or a GPU, for any
/// number of workers (the catalog's reductions do the same).
class PayoffMoments : public flow::Operation {
 public:
  static constexpr std::size_t paths_per_chunk = 2048;  // 16 KiB of prices: stays in L1 across options

  flow::InputPort<flow::Vector<double>> terminal_prices{*this, "terminal prices"};
  flow::InputPort<SetModel> model{*this, "model"};
  flow::OutputPort<flow::Vector<double>> output{*this, "output"};

  PayoffMoments() : Operation("payoff moments") {}
  void fire(flow::Context& c) override;
};

/// Adds a round's moments to the set's tally and emits the next Round. Runs on the host: it
/// reads 2K numbers, and what follows it (the convergence test) is control flow there anyway.
class Accumulate : public flow::Operation {
 public:
  flow::InputPort<flow::Vector<double>> moments{*this, "moments"};
  flow::InputPort<SetModel> model{*this, "model"};
  flow::InputPort<Tally> tally{*this, "tally"};
  flow::OutputPort<Round> output{*this, "output"};

  explicit Accumulate(std::size_t paths_per_round) : Operation("accumulate"), paths_per_round_(paths_per_round) {}
  flow::Runs runs() const override { return flow::Runs::host; }
  void fire(flow::Context& c) override;

 private:
  std::size_t paths_per_round_;
};

/// The discounted prices and standard errors of a set that left the cycle.
class Quote : public flow::Operation {
 public:
  flow::InputPort<Round> input{*this, "input"};
  flow::OutputPort<SetQuote> output{*this, "output"};

  explicit Quote(double tolerance) : Operation("quote"), tolerance_(tolerance) {}
  flow::Runs runs() const override { return flow::Runs::host; }
  void fire(flow::Context& c) override;

 private:
  double tolerance_;
};

}  // namespace flow_options
