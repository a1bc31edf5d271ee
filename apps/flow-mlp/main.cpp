// tessera-flow-mlp [--epochs N] [--hidden N] [--batch N] [--lr X] [--activation relu|sigmoid]
//                  [--train-limit N] [--test-limit N] [--no-fusion] [--seed N] [--target X] [--data DIR]
// tessera-flow-mlp --config run.toml    (the same options as `epochs = 3` lines; --help lists them)
// Trains the MLP of Alea §5.2 on Fashion-MNIST with forward and backward propagation dataflows
// and checks its test accuracy. Devices: TESSERA_DEVICES (host, sim:N, ...).
#include "flow-mlp/fashion_mnist.hpp"
#include "flow-mlp/mlp.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace {

struct Settings {
  flow_mlp::MlpConfig model;
  std::size_t epochs = 10;
  std::size_t batch = 100;
  std::size_t train_limit = flow_mlp::all_examples;
  std::size_t test_limit = flow_mlp::all_examples;
  bool fusion = true;
  double target = 0.85;
  std::string data = flow_mlp::fashion_mnist_directory();
};

void add_options(CLI::App& app, Settings& s, std::string& activation, bool& no_fusion) {
  using tessera_app::not_an_option;
  using tessera_app::not_negative;
  tessera_app::add_standard_options(app);
  app.add_option("--epochs", s.epochs, "passes over the training set")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--hidden", s.model.hidden, "hidden units")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--batch", s.batch, "examples per SGD step")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--lr", s.model.learning_rate, "learning rate, in (0, 1000]")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 1000, tessera_app::Ends::open_below));
  app.add_option("--activation", activation, "of the hidden layer")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"relu", "sigmoid"}));
  // The defaults are "every image": shown as such rather than as SIZE_MAX.
  app.add_option("--train-limit", s.train_limit, "use the first N training images")
      ->default_str("all 60000")
      ->check(not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  app.add_option("--test-limit", s.test_limit, "use the first N test images")
      ->default_str("all 10000")
      ->check(not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  app.add_flag("--no-fusion", no_fusion, "run the flows as built, without fusing operations");
  app.add_option("--seed", s.model.seed, "seed of the initial weights and the shuffles")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(std::int64_t{1}, std::numeric_limits<std::int64_t>::max()));
  app.add_option("--target", s.target, "the test accuracy to reach")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 1));
  app.add_option("--data", s.data, "directory of Fashion-MNIST's four .gz files (default: FASHION_MNIST_DIR where set)")
      ->capture_default_str()
      ->check(not_an_option);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const Settings& s) {
  namespace fm = flow_mlp;
  const fm::Dataset train = fm::read_fashion_mnist(s.data, true, s.train_limit);
  const fm::Dataset test = fm::read_fashion_mnist(s.data, false, s.test_limit);
  auto devices = tessera::DeviceSet::select();
  fm::MlpConfig model = s.model;
  model.inputs = train.pixels_per_image();
  model.classes = fm::fashion_classes;
  fm::Mlp mlp(devices, model, fm::MlpOptions{.fusion = s.fusion});

  std::string names = "host";
  for (std::size_t i = 0; i < devices.num_accelerators(); ++i) names += ", " + devices.accelerator(i).name();
  std::printf("flow-mlp: %zu -> %zu (%s) -> %zu, batch %zu, learning rate %g, %zu training and %zu test images\n",
              model.inputs, model.hidden, model.activation == fm::Activation::relu ? "relu" : "sigmoid", model.classes,
              s.batch, static_cast<double>(model.learning_rate), train.size(), test.size());
  std::printf("flow-mlp: devices %s, fusion %s\n", names.c_str(), s.fusion ? "on" : "off");

  const auto test_batches = fm::make_batches(mlp.flow(), test, fm::natural_order(test.size()), 1000);
  double accuracy = 0.0;
  for (std::size_t epoch = 1; epoch <= s.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    const auto order = fm::shuffled_order(train.size(), s.model.seed * 1000003u + epoch);
    const auto batches = fm::make_batches(mlp.flow(), train, order, s.batch);
    const double batching = seconds_since(start);
    const auto before = mlp.stats();
    start = std::chrono::steady_clock::now();
    const double loss = mlp.train(batches);
    const double training = seconds_since(start);
    const auto after = mlp.stats();
    start = std::chrono::steady_clock::now();
    accuracy = mlp.accuracy(test_batches);
    const double testing = seconds_since(start);
    std::printf(
        "epoch %zu/%zu: loss %.4f, train %.3f s (%zu steps; batches made in %.3f s), test accuracy %.4f (%.3f s), "
        "firings %zu, kernels %zu\n",
        epoch, s.epochs, loss, training, batches.size(), batching, accuracy, testing, after.firings - before.firings,
        after.kernels - before.kernels);
    std::fflush(stdout);
  }
  const auto stats = mlp.stats();
  std::printf("flow-mlp: %zu firings, %zu kernels, %zu fused operation pairs, %zu operations in the flow\n",
              stats.firings, stats.kernels, stats.fused, mlp.flow().operations().size());
  const bool pass = accuracy >= s.target;
  std::printf("check: test accuracy %.4f >= %.2f: %s\n", accuracy, s.target, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  std::string activation = "relu";
  bool no_fusion = false;
  CLI::App app{
      "Trains a 784 -> hidden -> 10 perceptron on Fashion-MNIST with forward and backward propagation "
      "dataflows (Alea 5.2) and checks the test accuracy. Devices: TESSERA_DEVICES.",
      "tessera-flow-mlp"};
  add_options(app, settings, activation, no_fusion);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  settings.model.activation = activation == "sigmoid" ? flow_mlp::Activation::sigmoid : flow_mlp::Activation::relu;
  settings.fusion = !no_fusion;
  try {
    return run(settings);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-flow-mlp: %s\n", e.what());
    return 2;
  }
}
