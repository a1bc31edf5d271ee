#pragma once
// The Markov-chain steady state as a cyclic dataflow (Alea figures 2-4): an Approximator sends
// (M, v) round a cycle of Splitter -> MatrixVectorProduct -> Merger until v stops changing.
// M is column-stochastic (M = P^T for the row-stochastic transition matrix P), so M v is one step.

#include <tessera/flow.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

namespace markov {

namespace flow = tessera::flow;

using State = std::tuple<flow::Matrix<double>, flow::Vector<double>>;

/// A random row-stochastic n x n transition matrix P (row-major), from `seed`.
std::vector<double> random_transition_matrix(std::size_t n, std::uint64_t seed);
/// M = P^T, row-major.
std::vector<double> transpose(const std::vector<double>& p, std::size_t n);
/// The stationary distribution of P from LAPACK's dgeev (the right eigenvector of P^T for the
/// eigenvalue closest to 1, scaled to sum 1). Throws tessera::Error when LAPACK fails.
std::vector<double> stationary_by_eigensolver(const std::vector<double>& p, std::size_t n);

/// The flow: send (M, v0) into `input()`, get the steady (M, v) from `output()`.
class SteadyStateFlow {
 public:
  SteadyStateFlow(flow::Flow& f, double threshold, std::size_t max_iterations);
  flow::InputPort<State, flow::Approximator<State>>& input() { return approximator_.input; }
  flow::OutputPort<State, flow::Approximator<State>>& output() { return approximator_.output; }
  const flow::Approximator<State>& approximator() const { return approximator_; }

 private:
  flow::Approximator<State>& approximator_;
};

}  // namespace markov
