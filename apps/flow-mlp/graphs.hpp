#pragma once
// The MLP's two dataflows, built from the catalog (Alea figure 10) in one flow::Flow:
//
// Training: one SGD step per batch (images X, rows x (inputs + 1); labels y). The parameters go
// round a cycle, so a run of steps is sent in at once and each step starts from the last one's
// result:
//
//   forward    Splitter ─> w1, w2, b2
//              A = Map f (MatrixProduct(X, w1))
//              G, log p = SoftmaxCrossEntropy(MatrixProduct(A, w2), b2, y)
//              loss sum = Reduce + (Map -x (log p))
//   backward   gw2 = MatrixProduct(Transpose(A), G)        gb2 = ColumnSums(G)
//              D = Map2 (e, a) -> e f'(z) (MatrixProduct(G, Transpose(w2)), A)
//              gw1 = MatrixProduct(Transpose(X), D)
//   update     w' = Map2 (w, g) -> w - rate g, for w1, w2, b2 ─> Merger ─> Turnout
//              Turnout.first (control true) ─> Splitter: the next step
//              Turnout.second (control false, the last step) ─> the result
//
// Evaluation, per batch: MatrixProduct(X, w1) ─> Map f ─> MatrixProduct(·, w2) ─>
// ScorePredictions(·, b2, y) ─> Reduce(+): the number right.
//
// Fusion (figure 11) turns each product-then-activation into a product with an epilogue, each
// Transpose-then-product into a product reading that operand transposed, and Map(-x)-then-Reduce
// into one MapReduce: five pairs in training, one in evaluation. The fusers join pairs of the
// operations as connected, not operations already fused, so the graph gives each operation at
// most one fuser partner.

#include "flow-mlp/operations.hpp"

#include <cstddef>
#include <cstdint>
#include <tuple>

namespace flow_mlp {

/// w1 ((inputs + 1) x hidden, its last row the hidden bias), w2 (hidden x classes), b2 (classes).
using ParameterSet = std::tuple<Matrix, Matrix, Vector>;

struct GraphSettings {
  Activation activation = Activation::relu;
  float learning_rate = 0.1f;
};

/// The ports a training step is driven and observed through.
struct TrainingGraph {
  /// Send the parameters in here once per run of steps.
  flow::Splitter<Matrix, Matrix, Vector>* parameters = nullptr;
  /// Send each batch's images into both, and its labels into the loss.
  flow::MatrixProduct<float>* hidden_product = nullptr;
  flow::Transpose<float>* input_transpose = nullptr;
  SoftmaxCrossEntropy* loss = nullptr;
  /// Send true for every step but the last, false for the last: its parameters leave on `second`.
  flow::Turnout<ParameterSet>* next_step = nullptr;
  /// Each step's sum over the batch of the cross-entropy.
  flow::Reduce<float, 1, Sum<float>>* loss_sum = nullptr;
  /// Each step's gradients of the batch-mean loss.
  flow::MatrixProduct<float>* w1_gradient = nullptr;
  flow::MatrixProduct<float>* w2_gradient = nullptr;
  ColumnSums* b2_gradient = nullptr;
};

TrainingGraph build_training_graph(flow::Flow& f, const GraphSettings& settings);

/// The ports an evaluation is driven and observed through; send into each per batch.
struct EvaluationGraph {
  flow::MatrixProduct<float>* hidden_product = nullptr;  ///< left: images, right: w1
  flow::MatrixProduct<float>* output_product = nullptr;  ///< right: w2
  ScorePredictions* score = nullptr;                     ///< bias: b2, labels
  flow::Reduce<std::int32_t, 1, Sum<std::int32_t>>* correct = nullptr;
};

EvaluationGraph build_evaluation_graph(flow::Flow& f, const GraphSettings& settings);

}  // namespace flow_mlp
