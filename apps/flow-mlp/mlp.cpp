#include "flow-mlp/mlp.hpp"

#include "flow-mlp/graphs.hpp"

#include <tessera/core/error.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace flow_mlp {
namespace {

void check_config(const MlpConfig& c) {
  if (c.inputs == 0 || c.hidden == 0 || c.classes == 0)
    throw tessera::Error("flow-mlp: the layers need at least one unit each, got " + std::to_string(c.inputs) + " -> " +
                         std::to_string(c.hidden) + " -> " + std::to_string(c.classes));
  if (!std::isfinite(c.learning_rate) || c.learning_rate <= 0.0f)
    throw tessera::Error("flow-mlp: the learning rate must be positive and finite, got " +
                         std::to_string(c.learning_rate));
}

flow::FlowOptions flow_options(const MlpOptions& o) {
  flow::FlowOptions f;
  f.fusion = o.fusion;
  f.placement = o.placement;
  return f;
}

void check_size(const char* what, std::size_t expected, std::size_t got) {
  if (expected != got)
    throw tessera::Error(std::string("flow-mlp: ") + what + " needs " + std::to_string(expected) + " values, got " +
                         std::to_string(got));
}

}  // namespace

Parameters initial_parameters(const MlpConfig& config) {
  check_config(config);
  const std::size_t n = config.inputs, h = config.hidden, k = config.classes;
  const bool relu = config.activation == Activation::relu;
  auto uniform = [&](std::uint64_t block, std::size_t i, double fan_in, double fan_out) {
    const double limit = std::sqrt(6.0 / (fan_in + (relu && block == 1 ? 0.0 : fan_out)));
    const double u = flow::philox_value<double>(config.seed, block, i, flow::Distribution::uniform);
    return static_cast<float>((2.0 * u - 1.0) * limit);
  };
  Parameters p;
  p.w1.assign((n + 1) * h, 0.0f);  // the last row, the bias, stays 0
  for (std::size_t i = 0; i < n * h; ++i) p.w1[i] = uniform(1, i, static_cast<double>(n), static_cast<double>(h));
  p.w2.resize(h * k);
  for (std::size_t i = 0; i < h * k; ++i) p.w2[i] = uniform(2, i, static_cast<double>(h), static_cast<double>(k));
  p.b2.assign(k, 0.0f);
  return p;
}

struct Mlp::State {
  State(tessera::DeviceSet& devices, const MlpConfig& c, const MlpOptions& o)
      : config(c),
        options(o),
        flow(devices, flow_options(o)),
        training(build_training_graph(flow, GraphSettings{c.activation, c.learning_rate})),
        evaluation(build_evaluation_graph(flow, GraphSettings{c.activation, c.learning_rate})) {
    // Each port's callbacks run one at a time, and Flow::wait orders them before the host reads.
    flow.on_receive(training.next_step->second, [this](const ParameterSet& p) { trained = p; });
    flow.on_receive(training.loss_sum->output, [this](const flow::Scalar<float>& s) { step_loss_sums.push_back(s); });
    flow.on_receive(evaluation.correct->output,
                    [this](const flow::Scalar<std::int32_t>& s) { batch_correct.push_back(s); });
    if (options.record_gradients) {
      flow.on_receive(training.w1_gradient->output, [this](const Matrix& g) { w1_gradient = g; });
      flow.on_receive(training.w2_gradient->output, [this](const Matrix& g) { w2_gradient = g; });
      flow.on_receive(training.b2_gradient->sums, [this](const Vector& g) { b2_gradient = g; });
    }
  }

  MlpConfig config;
  MlpOptions options;
  flow::Flow flow;  // before every array below: they go first
  TrainingGraph training;
  EvaluationGraph evaluation;
  ParameterSet current;
  std::optional<ParameterSet> trained;
  std::vector<flow::Scalar<float>> step_loss_sums;
  std::vector<flow::Scalar<std::int32_t>> batch_correct;
  Matrix w1_gradient, w2_gradient;
  Vector b2_gradient;
};

Mlp::Mlp(tessera::DeviceSet& devices, const MlpConfig& config, const MlpOptions& options) {
  check_config(config);
  state_ = std::make_unique<State>(devices, config, options);
  set_parameters(initial_parameters(config));
}

Mlp::~Mlp() = default;

flow::Flow& Mlp::flow() noexcept { return state_->flow; }
const MlpConfig& Mlp::config() const noexcept { return state_->config; }
flow::FlowStats Mlp::stats() const { return state_->flow.stats(); }

double Mlp::train(std::span<const Batch> batches) {
  State& s = *state_;
  if (batches.empty()) return 0.0;
  s.step_loss_sums.clear();
  s.step_loss_sums.reserve(batches.size());
  s.trained.reset();
  TrainingGraph& g = s.training;
  s.flow.send(g.parameters->input, s.current);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    const flow::InputSet set = s.flow.new_input_set();
    s.flow.send(g.hidden_product->left, b.images, set);
    s.flow.send(g.input_transpose->input, b.images, set);
    s.flow.send(g.loss->labels, b.labels, set);
    s.flow.send(g.next_step->control, i + 1 < batches.size(), set);
  }
  s.flow.wait();
  if (!s.trained || s.step_loss_sums.size() != batches.size())
    throw tessera::Error("flow-mlp: the training flow ended after " + std::to_string(s.step_loss_sums.size()) + " of " +
                         std::to_string(batches.size()) + " steps without its parameters");
  s.current = *s.trained;
  s.trained.reset();
  double total = 0.0;
  for (std::size_t i = 0; i < batches.size(); ++i)
    total += static_cast<double>(s.step_loss_sums[i].value()) / static_cast<double>(batches[i].size());
  s.step_loss_sums.clear();
  return total / static_cast<double>(batches.size());
}

double Mlp::accuracy(std::span<const Batch> batches) {
  State& s = *state_;
  if (batches.empty()) return 0.0;
  s.batch_correct.clear();
  EvaluationGraph& g = s.evaluation;
  const auto& [w1, w2, b2] = s.current;
  std::size_t examples = 0;
  for (const Batch& b : batches) {
    const flow::InputSet set = s.flow.new_input_set();
    s.flow.send(g.hidden_product->left, b.images, set);
    s.flow.send(g.hidden_product->right, w1, set);
    s.flow.send(g.output_product->right, w2, set);
    s.flow.send(g.score->bias, b2, set);
    s.flow.send(g.score->labels, b.labels, set);
    examples += b.size();
  }
  s.flow.wait();
  std::size_t correct = 0;
  for (const auto& c : s.batch_correct) correct += static_cast<std::size_t>(c.value());
  s.batch_correct.clear();
  return static_cast<double>(correct) / static_cast<double>(examples);
}

Parameters Mlp::parameters() const {
  const auto& [w1, w2, b2] = state_->current;
  return Parameters{w1.to_vector(), w2.to_vector(), b2.to_vector()};
}

void Mlp::set_parameters(const Parameters& p) {
  State& s = *state_;
  const MlpConfig& c = s.config;
  check_size("w1 ((inputs + 1) x hidden)", (c.inputs + 1) * c.hidden, p.w1.size());
  check_size("w2 (hidden x classes)", c.hidden * c.classes, p.w2.size());
  check_size("b2 (classes)", c.classes, p.b2.size());
  s.current = ParameterSet{Matrix(s.flow, std::array<std::size_t, 2>{c.inputs + 1, c.hidden}, std::span(p.w1)),
                           Matrix(s.flow, std::array<std::size_t, 2>{c.hidden, c.classes}, std::span(p.w2)),
                           Vector(s.flow, p.b2)};
}

Parameters Mlp::last_gradients() const {
  const State& s = *state_;
  return Parameters{s.w1_gradient.to_vector(), s.w2_gradient.to_vector(), s.b2_gradient.to_vector()};
}

}  // namespace flow_mlp
