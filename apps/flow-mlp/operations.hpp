#pragma once
// What the MLP's flows compute with besides the catalog's own operations: the element functions
// its Maps, Map2s and Reduce apply, and three custom operations for what the catalog has no
// standard form of (Alea's engine had five custom CPU operations): the softmax with
// cross-entropy and its gradient, the column sums that give the output bias its gradient, and
// the count of right predictions.

#include <tessera/core/host_device.hpp>
#include <tessera/flow.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace flow_mlp {

namespace flow = tessera::flow;
using Matrix = flow::Matrix<float>;
using Vector = flow::Vector<float>;
using Labels = flow::Vector<std::int32_t>;

enum class Activation { sigmoid, relu };

/// The hidden layer's activation, f(z).
struct Activate {
  Activation kind = Activation::relu;
  TESSERA_HOST_DEVICE float operator()(float z) const {
    if (kind == Activation::relu) return z > 0.0f ? z : 0.0f;
    return 1.0f / (1.0f + expf(-z));
  }
};

/// error * f'(z), with f'(z) read off the activation a = f(z): the forward pass keeps a, not z.
struct ActivationBackward {
  Activation kind = Activation::relu;
  TESSERA_HOST_DEVICE float operator()(float error, float a) const {
    if (kind == Activation::relu) return a > 0.0f ? error : 0.0f;
    return error * a * (1.0f - a);
  }
};

/// One step of gradient descent: w - rate * g.
struct SgdStep {
  float rate = 0.1f;
  TESSERA_HOST_DEVICE float operator()(float w, float g) const { return w - rate * g; }
};

/// -x: a log-likelihood to its cross-entropy.
struct Negate {
  TESSERA_HOST_DEVICE float operator()(float x) const { return -x; }
};

template <typename T>
struct Sum {
  TESSERA_HOST_DEVICE T operator()(T a, T b) const { return a + b; }
};

/// The output layer's softmax over (logits + bias) per row, against the rows' labels:
///   gradient[r][j] = (p[r][j] - [j == label r]) / rows, the batch-mean loss's gradient by logit;
///   log_likelihood[r] = log p[r][label r], computed as a log-sum-exp (no underflow).
/// Labels outside [0, classes) give a log-likelihood of -inf and no one-hot term.
class SoftmaxCrossEntropy : public flow::Operation {
 public:
  flow::InputPort<Matrix, SoftmaxCrossEntropy> logits{*this, "logits"};
  flow::InputPort<Vector, SoftmaxCrossEntropy> bias{*this, "bias"};
  flow::InputPort<Labels, SoftmaxCrossEntropy> labels{*this, "labels"};
  flow::OutputPort<Matrix, SoftmaxCrossEntropy> gradient{*this, "gradient"};
  flow::OutputPort<Vector, SoftmaxCrossEntropy> log_likelihood{*this, "log likelihood"};

  explicit SoftmaxCrossEntropy(std::string name = "softmax cross-entropy") : Operation(std::move(name)) {}
  void fire(flow::Context& c) override;
};

/// sums[j] = the sum of column j (the rows in order).
class ColumnSums : public flow::Operation {
 public:
  flow::InputPort<Matrix, ColumnSums> input{*this, "input"};
  flow::OutputPort<Vector, ColumnSums> sums{*this, "sums"};

  explicit ColumnSums(std::string name = "column sums") : Operation(std::move(name)) {}
  void fire(flow::Context& c) override;
};

/// hits[r] = 1 where the largest of (logits + bias) in row r is at the row's label (the first
/// one on ties), else 0.
class ScorePredictions : public flow::Operation {
 public:
  flow::InputPort<Matrix, ScorePredictions> logits{*this, "logits"};
  flow::InputPort<Vector, ScorePredictions> bias{*this, "bias"};
  flow::InputPort<Labels, ScorePredictions> labels{*this, "labels"};
  flow::OutputPort<Labels, ScorePredictions> hits{*this, "hits"};

  explicit ScorePredictions(std::string name = "score predictions") : Operation(std::move(name)) {}
  void fire(flow::Context& c) override;
};

}  // namespace flow_mlp
