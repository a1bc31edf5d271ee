#pragma once
// The multilayer perceptron of Alea §5.2: inputs -> hidden (sigmoid or ReLU) -> classes (softmax,
// cross-entropy), trained by minibatch SGD. A training run is one dataflow (graphs.hpp): every
// batch is sent in at once, the parameters go round the flow's cycle from step to step, and the
// host waits once, at the end; evaluation is a second dataflow in the same flow::Flow.
//
//   auto devices = tessera::DeviceSet::select();
//   flow_mlp::Mlp mlp(devices, config);
//   auto batches = flow_mlp::make_batches(mlp.flow(), train, flow_mlp::shuffled_order(train.size(), 1), 100);
//   double loss = mlp.train(batches);
//   double accuracy = mlp.accuracy(test_batches);

#include "flow-mlp/batches.hpp"
#include "flow-mlp/operations.hpp"

#include <tessera/device/device_set.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace flow_mlp {

struct MlpConfig {
  std::size_t inputs = 784;
  std::size_t hidden = 128;
  std::size_t classes = 10;
  Activation activation = Activation::relu;
  float learning_rate = 0.1f;
  std::uint64_t seed = 1;  ///< of the initial weights
};

/// Parameters (or their gradients) on the host, row-major: w1 is (inputs + 1) x hidden, its last
/// row the hidden layer's bias (batches.hpp); w2 is hidden x classes; b2 has `classes` values.
struct Parameters {
  std::vector<float> w1, w2, b2;
};

/// Uniform weights in +-sqrt(6 / (fan_in + fan_out)) (Glorot; fan_out 0 for ReLU, He's choice),
/// a function of `config.seed` only; zero biases.
Parameters initial_parameters(const MlpConfig& config);

struct MlpOptions {
  /// Fuse the flows' operations (FlowOptions::fusion).
  bool fusion = true;
  /// Keep the gradients of each training run's last step for last_gradients().
  bool record_gradients = false;
  flow::Placement placement = flow::Placement::data_affine;
};

class Mlp {
 public:
  /// `devices` must outlive the model. Throws tessera::Error for a config with a zero size or a
  /// learning rate that is not positive and finite.
  Mlp(tessera::DeviceSet& devices, const MlpConfig& config, const MlpOptions& options = {});
  ~Mlp();
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  /// The flow of both dataflows: batches must be its arrays (make_batches(flow(), ...)).
  flow::Flow& flow() noexcept;
  const MlpConfig& config() const noexcept;

  /// One SGD step per batch, in order. Returns the mean over the steps of each batch's mean
  /// cross-entropy (before that step's update); 0 for no batches. Rethrows a firing's error.
  double train(std::span<const Batch> batches);
  /// The fraction of the batches' examples whose largest output is their label.
  double accuracy(std::span<const Batch> batches);

  Parameters parameters() const;
  /// Throws tessera::Error when a size differs from the config's.
  void set_parameters(const Parameters& p);
  /// The gradients of the batch-mean loss in the last step of the last train() (record_gradients;
  /// empty vectors otherwise).
  Parameters last_gradients() const;
  flow::FlowStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flow_mlp
