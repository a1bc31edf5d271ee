#include "flow-mlp/graphs.hpp"

namespace flow_mlp {

TrainingGraph build_training_graph(flow::Flow& f, const GraphSettings& settings) {
  const Activate activate{settings.activation};
  const SgdStep step{settings.learning_rate};
  TrainingGraph g;

  // The parameters of a step, from the user or from the step before.
  auto& parameters = f.add<flow::Splitter<Matrix, Matrix, Vector>>("parameters");
  g.parameters = &parameters;

  // Forward.
  auto& hidden_product = f.add<flow::MatrixProduct<float>>("hidden product");
  auto& hidden_activation = flow::map<float, 2>(f, "hidden activation", activate);
  auto& output_product = f.add<flow::MatrixProduct<float>>("output product");
  auto& loss = f.add<SoftmaxCrossEntropy>("loss");
  auto& cross_entropy = flow::map<float>(f, "cross-entropy", Negate{});
  auto& loss_sum = flow::reduce<float>(f, "loss sum", 0.0f, Sum<float>{});
  flow::connect(parameters.first, hidden_product.right);
  flow::connect(hidden_product.output, hidden_activation.input);
  flow::connect(hidden_activation.output, output_product.left);
  flow::connect(parameters.second, output_product.right);
  flow::connect(output_product.output, loss.logits);
  flow::connect(parameters.third, loss.bias);
  flow::connect(loss.log_likelihood, cross_entropy.input);
  flow::connect(cross_entropy.output, loss_sum.input);

  // Backward: the output layer's gradients, the error sent back through w2, the hidden layer's.
  auto& hidden_transpose = f.add<flow::Transpose<float>>("hidden transpose");
  auto& w2_gradient = f.add<flow::MatrixProduct<float>>("w2 gradient");
  auto& b2_gradient = f.add<ColumnSums>("b2 gradient");
  auto& w2_transpose = f.add<flow::Transpose<float>>("w2 transpose");
  auto& hidden_error = f.add<flow::MatrixProduct<float>>("hidden error");
  auto& hidden_delta = flow::map2<float, float, 2>(f, "hidden delta", ActivationBackward{settings.activation});
  auto& input_transpose = f.add<flow::Transpose<float>>("input transpose");
  auto& w1_gradient = f.add<flow::MatrixProduct<float>>("w1 gradient");
  flow::connect(hidden_activation.output, hidden_transpose.input);
  flow::connect(hidden_transpose.output, w2_gradient.left);
  flow::connect(loss.gradient, w2_gradient.right);
  flow::connect(loss.gradient, b2_gradient.input);
  flow::connect(parameters.second, w2_transpose.input);
  flow::connect(loss.gradient, hidden_error.left);
  flow::connect(w2_transpose.output, hidden_error.right);
  flow::connect(hidden_error.output, hidden_delta.first);
  flow::connect(hidden_activation.output, hidden_delta.second);
  flow::connect(input_transpose.output, w1_gradient.left);
  flow::connect(hidden_delta.output, w1_gradient.right);

  // The updates, joined into the next step's parameters.
  auto& w1_update = flow::map2<float, float, 2>(f, "w1 update", step);
  auto& w2_update = flow::map2<float, float, 2>(f, "w2 update", step);
  auto& b2_update = flow::map2<float, float, 1>(f, "b2 update", step);
  auto& updated = f.add<flow::Merger<Matrix, Matrix, Vector>>("updated parameters");
  auto& next_step = f.add<flow::Turnout<ParameterSet>>("next step");
  flow::connect(parameters.first, w1_update.first);
  flow::connect(w1_gradient.output, w1_update.second);
  flow::connect(parameters.second, w2_update.first);
  flow::connect(w2_gradient.output, w2_update.second);
  flow::connect(parameters.third, b2_update.first);
  flow::connect(b2_gradient.sums, b2_update.second);
  flow::connect(w1_update.output, updated.first);
  flow::connect(w2_update.output, updated.second);
  flow::connect(b2_update.output, updated.third);
  flow::connect(updated.output, next_step.input);
  flow::connect(next_step.first, parameters.input);

  g.hidden_product = &hidden_product;
  g.input_transpose = &input_transpose;
  g.loss = &loss;
  g.next_step = &next_step;
  g.loss_sum = &loss_sum;
  g.w1_gradient = &w1_gradient;
  g.w2_gradient = &w2_gradient;
  g.b2_gradient = &b2_gradient;
  return g;
}

EvaluationGraph build_evaluation_graph(flow::Flow& f, const GraphSettings& settings) {
  auto& hidden_product = f.add<flow::MatrixProduct<float>>("evaluation hidden product");
  auto& hidden_activation = flow::map<float, 2>(f, "evaluation hidden activation", Activate{settings.activation});
  auto& output_product = f.add<flow::MatrixProduct<float>>("evaluation output product");
  auto& score = f.add<ScorePredictions>("score");
  auto& correct = flow::reduce<std::int32_t>(f, "correct", std::int32_t{0}, Sum<std::int32_t>{});
  flow::connect(hidden_product.output, hidden_activation.input);
  flow::connect(hidden_activation.output, output_product.left);
  flow::connect(output_product.output, score.logits);
  flow::connect(score.hits, correct.input);
  return EvaluationGraph{&hidden_product, &output_product, &score, &correct};
}

}  // namespace flow_mlp
