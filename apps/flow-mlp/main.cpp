// tessera-flow-mlp [--epochs N] [--hidden N] [--batch N] [--lr X] [--activation relu|sigmoid]
//                  [--train-limit N] [--test-limit N] [--no-fusion] [--seed N] [--target X] [--data DIR]
// Trains the MLP of Alea §5.2 on Fashion-MNIST with forward and backward propagation dataflows
// and checks its test accuracy. Devices: TESSERA_DEVICES (host, sim:N, ...).
#include "flow-mlp/fashion_mnist.hpp"
#include "flow-mlp/mlp.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

const char* const usage_text =
    "usage: tessera-flow-mlp [options]\n"
    "  Trains a 784 -> hidden -> 10 perceptron on Fashion-MNIST with forward and backward\n"
    "  propagation dataflows (Alea 5.2) and checks the test accuracy. Devices: TESSERA_DEVICES.\n"
    "  --epochs N            passes over the training set (default 10)\n"
    "  --hidden N            hidden units (default 128)\n"
    "  --batch N             examples per SGD step (default 100)\n"
    "  --lr X                learning rate (default 0.1)\n"
    "  --activation A        relu (default) or sigmoid\n"
    "  --train-limit N       use the first N training images (default all 60000)\n"
    "  --test-limit N        use the first N test images (default all 10000)\n"
    "  --no-fusion           run the flows as built, without fusing operations\n"
    "  --seed N              seed of the initial weights and the shuffles (default 1)\n"
    "  --target X            the test accuracy to reach (default 0.85)\n"
    "  --data DIR            the four .gz files (default FASHION_MNIST_DIR, else\n"
    "                        /usr/share/datasets/fashion-mnist)\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "tessera-flow-mlp: %s\n%s", why.c_str(), usage_text);
  std::exit(2);
}

std::size_t positive_integer(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || v == 0)
    usage_error(option + " expects a positive integer, got '" + text + "'");
  return static_cast<std::size_t>(v);
}

// A number in [low, high], or (low, high] when `open_low`.
double number_in(const std::string& option, const std::string& text, double low, bool open_low, double high,
                 const char* range) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool above_low = open_low ? v > low : v >= low;
  if (text.empty() || *end != '\0' || !std::isfinite(v) || !above_low || v > high)
    usage_error(option + " expects a number " + range + ", got '" + text + "'");
  return v;
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--help" || option == "-h") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    }
    if (option == "--no-fusion") {
      s.fusion = false;
      continue;
    }
    if (i + 1 >= argc) usage_error(option + " needs a value");
    const std::string value = argv[++i];
    if (option == "--epochs")
      s.epochs = positive_integer(option, value);
    else if (option == "--hidden")
      s.model.hidden = positive_integer(option, value);
    else if (option == "--batch")
      s.batch = positive_integer(option, value);
    else if (option == "--lr")
      s.model.learning_rate = static_cast<float>(number_in(option, value, 0.0, true, 1e3, "in (0, 1000]"));
    else if (option == "--activation") {
      if (value == "relu")
        s.model.activation = flow_mlp::Activation::relu;
      else if (value == "sigmoid")
        s.model.activation = flow_mlp::Activation::sigmoid;
      else
        usage_error("--activation expects relu or sigmoid, got '" + value + "'");
    } else if (option == "--train-limit")
      s.train_limit = positive_integer(option, value);
    else if (option == "--test-limit")
      s.test_limit = positive_integer(option, value);
    else if (option == "--seed")
      s.model.seed = positive_integer(option, value);
    else if (option == "--target")
      s.target = number_in(option, value, 0.0, false, 1.0, "in [0, 1]");
    else if (option == "--data")
      s.data = value;
    else
      usage_error("unknown option '" + option + "'");
  }
  return s;
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
  const Settings settings = parse(argc, argv);
  try {
    return run(settings);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-flow-mlp: %s\n", e.what());
    return 2;
  }
}
