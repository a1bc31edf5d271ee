// apps/flow-mlp's model: the training flow's gradients against finite differences of a plain
// double-precision network, its update against one SGD step, learning on a Fashion-MNIST slice,
// evaluation against the plain network, fused against unfused training, and its errors; on the
// host and on a simulated device.

#include "flow-mlp/fashion_mnist.hpp"
#include "flow-mlp/mlp.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fm = flow_mlp;

namespace {

/// The same network written as plain loops in double: what the flows must compute.
struct PlainNetwork {
  fm::MlpConfig config;

  /// The hidden activations and the logits (with b2) of each row of `x` (rows x (inputs + 1)).
  std::vector<double> logits(const std::vector<double>& w1, const std::vector<double>& w2,
                             const std::vector<double>& b2, const std::vector<float>& x, std::size_t rows) const {
    const std::size_t n = config.inputs + 1, h = config.hidden, k = config.classes;
    std::vector<double> out(rows * k);
    std::vector<double> a(h);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < h; ++j) {
        double z = 0;
        for (std::size_t i = 0; i < n; ++i) z += static_cast<double>(x[r * n + i]) * w1[i * h + j];
        a[j] = config.activation == fm::Activation::relu ? std::max(z, 0.0) : 1.0 / (1.0 + std::exp(-z));
      }
      for (std::size_t c = 0; c < k; ++c) {
        double s = b2[c];
        for (std::size_t j = 0; j < h; ++j) s += a[j] * w2[j * k + c];
        out[r * k + c] = s;
      }
    }
    return out;
  }

  /// The batch-mean cross-entropy.
  double loss(const std::vector<double>& w1, const std::vector<double>& w2, const std::vector<double>& b2,
              const std::vector<float>& x, const std::vector<std::int32_t>& y) const {
    const std::size_t rows = y.size(), k = config.classes;
    const auto z = logits(w1, w2, b2, x, rows);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double top = *std::max_element(z.begin() + static_cast<std::ptrdiff_t>(r * k),
                                           z.begin() + static_cast<std::ptrdiff_t>((r + 1) * k));
      double e = 0;
      for (std::size_t c = 0; c < k; ++c) e += std::exp(z[r * k + c] - top);
      total += top + std::log(e) - z[r * k + static_cast<std::size_t>(y[r])];
    }
    return total / static_cast<double>(rows);
  }
};

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

/// Inputs in [0, 1) with the constant 1 last, and labels, from a fixed generator.
struct TinyBatch {
  std::vector<float> x;
  std::vector<std::int32_t> y;
};
TinyBatch tiny_batch(std::size_t rows, std::size_t inputs, std::size_t classes, std::uint64_t seed) {
  TinyBatch b;
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < inputs; ++i) b.x.push_back(static_cast<float>(next() % 1000) / 1000.0f);
    b.x.push_back(1.0f);
    b.y.push_back(static_cast<std::int32_t>(next() % classes));
  }
  return b;
}

fm::Batch to_batch(fm::Mlp& mlp, const TinyBatch& t) {
  const std::size_t rows = t.y.size();
  return fm::Batch{fm::Matrix(mlp.flow(), {rows, t.x.size() / rows}, std::span<const float>(t.x)),
                   fm::Labels(mlp.flow(), t.y)};
}

bool have_fashion_mnist() {
  return std::filesystem::exists(fm::fashion_mnist_directory() + "/t10k-labels-idx1-ubyte.gz");
}

class MlpFlow : public ::testing::TestWithParam<std::string> {
 protected:
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
};

std::string backend_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s = p.param;
  std::replace(s.begin(), s.end(), ':', '_');
  return s;
}

}  // namespace

// The flows' backward pass is the gradient of the loss the plain network computes: central
// differences in double (h = 1e-5: truncation ~1e-10, rounding ~1e-11) against the flow's float
// gradients, whose own error is a few float ulps of terms of size ~0.1.
TEST_P(MlpFlow, GradientsMatchFiniteDifferences) {
  for (const fm::Activation activation : {fm::Activation::sigmoid, fm::Activation::relu}) {
    const fm::MlpConfig config{
        .inputs = 6, .hidden = 5, .classes = 4, .activation = activation, .learning_rate = 0.5f, .seed = 11};
    fm::Mlp mlp(devices, config, fm::MlpOptions{.record_gradients = true});
    const TinyBatch t = tiny_batch(7, config.inputs, config.classes, 3);
    const fm::Parameters p = mlp.parameters();
    const fm::Batch batch = to_batch(mlp, t);
    const double flow_loss = mlp.train(std::span(&batch, 1));
    const fm::Parameters g = mlp.last_gradients();

    const PlainNetwork plain{config};
    std::vector<double> w1 = widen(p.w1), w2 = widen(p.w2), b2 = widen(p.b2);
    EXPECT_NEAR(flow_loss, plain.loss(w1, w2, b2, t.x, t.y), 1e-5);
    const double h = 1e-5;
    auto check = [&](std::vector<double>& w, const std::vector<float>& flow_gradient, const char* name) {
      ASSERT_EQ(flow_gradient.size(), w.size()) << name;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const double saved = w[i];
        w[i] = saved + h;
        const double up = plain.loss(w1, w2, b2, t.x, t.y);
        w[i] = saved - h;
        const double down = plain.loss(w1, w2, b2, t.x, t.y);
        w[i] = saved;
        const double numeric = (up - down) / (2 * h);
        EXPECT_NEAR(flow_gradient[i], numeric, 1e-5 + 1e-3 * std::abs(numeric))
            << name << "[" << i << "], " << (activation == fm::Activation::relu ? "relu" : "sigmoid");
      }
    };
    check(w1, g.w1, "w1");
    check(w2, g.w2, "w2");
    check(b2, g.b2, "b2");

    // The update is one SGD step with those gradients, in float as the flow's Map2 does it.
    const fm::Parameters q = mlp.parameters();
    for (std::size_t i = 0; i < p.w1.size(); ++i) EXPECT_FLOAT_EQ(q.w1[i], p.w1[i] - config.learning_rate * g.w1[i]);
    for (std::size_t i = 0; i < p.w2.size(); ++i) EXPECT_FLOAT_EQ(q.w2[i], p.w2[i] - config.learning_rate * g.w2[i]);
    for (std::size_t i = 0; i < p.b2.size(); ++i) EXPECT_FLOAT_EQ(q.b2[i], p.b2[i] - config.learning_rate * g.b2[i]);
  }
}

// A run of steps is one pass through the cycle: each step starts from the one before's result.
TEST_P(MlpFlow, StepsChainThroughTheCycle) {
  const fm::MlpConfig config{.inputs = 6, .hidden = 5, .classes = 4, .learning_rate = 0.3f, .seed = 5};
  fm::Mlp chained(devices, config), one_by_one(devices, config);
  std::vector<fm::Batch> batches, singles;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const TinyBatch t = tiny_batch(5 + seed, config.inputs, config.classes, seed);
    batches.push_back(to_batch(chained, t));
    singles.push_back(to_batch(one_by_one, t));
  }
  const double mean_loss = chained.train(batches);
  double total = 0;
  for (const fm::Batch& b : singles) total += one_by_one.train(std::span(&b, 1));
  EXPECT_DOUBLE_EQ(mean_loss, total / 4);
  const fm::Parameters a = chained.parameters(), b = one_by_one.parameters();
  EXPECT_EQ(a.w1, b.w1);
  EXPECT_EQ(a.w2, b.w2);
  EXPECT_EQ(a.b2, b.b2);
}

// 2000 training images, 3 epochs of batches of 20: well above chance (0.1) in well under a second
// on the host. The flow's evaluation agrees with the plain network's predictions.
TEST_P(MlpFlow, LearnsAFashionMnistSlice) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
  const fm::Dataset train = fm::read_fashion_mnist(fm::fashion_mnist_directory(), true, 2000);
  const fm::Dataset test = fm::read_fashion_mnist(fm::fashion_mnist_directory(), false, 1000);
  fm::Mlp mlp(devices, fm::MlpConfig{});
  const auto test_batches = fm::make_batches(mlp.flow(), test, fm::natural_order(test.size()), 250);
  const double before = mlp.accuracy(test_batches);
  std::vector<double> losses;
  for (std::uint64_t epoch = 1; epoch <= 3; ++epoch) {
    const auto batches = fm::make_batches(mlp.flow(), train, fm::shuffled_order(train.size(), epoch), 20);
    losses.push_back(mlp.train(batches));
  }
  const double accuracy = mlp.accuracy(test_batches);
  EXPECT_LT(before, 0.3);
  EXPECT_GE(accuracy, 0.70);
  EXPECT_GT(losses[0], losses[1]);
  EXPECT_GT(losses[1], losses[2]);

  const fm::Parameters p = mlp.parameters();
  const PlainNetwork plain{mlp.config()};
  std::size_t right = 0;
  for (const fm::Batch& b : test_batches) {
    const std::vector<float> x = b.images.to_vector();
    const std::vector<std::int32_t> y = b.labels.to_vector();
    const auto z = plain.logits(widen(p.w1), widen(p.w2), widen(p.b2), x, y.size());
    for (std::size_t r = 0; r < y.size(); ++r) {
      const auto row = z.begin() + static_cast<std::ptrdiff_t>(r * 10);
      right += std::max_element(row, row + 10) - row == y[r] ? 1 : 0;
    }
  }
  // Only a near-tie between two logits may come out differently in float and double.
  EXPECT_NEAR(accuracy, static_cast<double>(right) / static_cast<double>(test.size()), 0.002);
}

// Fusion changes how the work is cut, not what is computed: the fused products apply the same
// float operations (an epilogue is the Map's function on each element of the same product; a
// transposed operand is the same sum in the same order), so the two trainings agree to the bit
// here. The tolerance allows a BLAS whose transposed-operand kernel sums in another order: then
// each step differs by float rounding (~1e-7 relative), which training does not amplify beyond
// 1e-4 in 200 steps.
TEST_P(MlpFlow, FusedAndUnfusedTrainingAgree) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed";
  const fm::Dataset train = fm::read_fashion_mnist(fm::fashion_mnist_directory(), true, 2000);
  const fm::Dataset test = fm::read_fashion_mnist(fm::fashion_mnist_directory(), false, 1000);
  struct Run {
    fm::Parameters parameters;
    double accuracy = 0;
    tessera::flow::FlowStats stats;
    std::vector<std::string> operations;
  };
  auto run = [&](bool fusion) {
    fm::Mlp mlp(devices, fm::MlpConfig{.activation = fm::Activation::sigmoid, .learning_rate = 0.5f},
                fm::MlpOptions{.fusion = fusion});
    const auto batches = fm::make_batches(mlp.flow(), train, fm::shuffled_order(train.size(), 7), 20);
    const auto test_batches = fm::make_batches(mlp.flow(), test, fm::natural_order(test.size()), 500);
    mlp.train(batches);
    mlp.train(batches);
    Run r{mlp.parameters(), mlp.accuracy(test_batches), mlp.stats(), {}};
    for (const auto* op : mlp.flow().operations()) r.operations.push_back(op->name());
    return r;
  };
  const Run fused = run(true), unfused = run(false);
  auto max_difference = [](const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
    return d;
  };
  EXPECT_LE(max_difference(fused.parameters.w1, unfused.parameters.w1), 1e-4);
  EXPECT_LE(max_difference(fused.parameters.w2, unfused.parameters.w2), 1e-4);
  EXPECT_LE(max_difference(fused.parameters.b2, unfused.parameters.b2), 1e-4);
  EXPECT_NEAR(fused.accuracy, unfused.accuracy, 0.002);
  EXPECT_GE(fused.accuracy, 0.70);

  // Five pairs fuse in training, one in evaluation; each removes a kernel and a firing per step.
  EXPECT_EQ(fused.stats.fused, 6u);
  EXPECT_EQ(unfused.stats.fused, 0u);
  const std::size_t steps = 2 * 100;
  const std::size_t evaluations = 2;
  EXPECT_EQ(unfused.stats.kernels - fused.stats.kernels, 5 * steps + evaluations);
  EXPECT_EQ(unfused.stats.firings - fused.stats.firings, 5 * steps + evaluations);
  for (const char* name : {"hidden product+hidden activation", "hidden transpose+w2 gradient",
                           "w2 transpose+hidden error", "input transpose+w1 gradient", "cross-entropy+loss sum",
                           "evaluation hidden product+evaluation hidden activation"})
    EXPECT_NE(std::find(fused.operations.begin(), fused.operations.end(), name), fused.operations.end()) << name;
  EXPECT_EQ(unfused.operations.size(), fused.operations.size() + 6);
}

TEST_P(MlpFlow, BadInputsAreErrors) {
  const fm::MlpConfig config{.inputs = 6, .hidden = 5, .classes = 4};
  EXPECT_THROW(fm::Mlp(devices, fm::MlpConfig{.hidden = 0}), tessera::Error);
  EXPECT_THROW(fm::Mlp(devices, fm::MlpConfig{.learning_rate = -1.0f}), tessera::Error);
  fm::Mlp mlp(devices, config);
  fm::Parameters p = mlp.parameters();
  p.w2.pop_back();
  try {
    mlp.set_parameters(p);
    ADD_FAILURE() << "no error for a short w2";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("w2 (hidden x classes) needs 20 values, got 19"), std::string::npos)
        << e.what();
  }
  fm::Dataset data;
  data.rows = data.cols = 1;
  data.pixels = {0, 1};
  data.labels = {0, 1};
  EXPECT_THROW(fm::make_batches(mlp.flow(), data, fm::natural_order(2), 0), tessera::Error);
  const std::vector<std::size_t> outside{0, 2};
  EXPECT_THROW(fm::make_batches(mlp.flow(), data, outside, 1), tessera::Error);

  // Labels that do not match the images: the loss operation's firing fails, and train says so.
  TinyBatch t = tiny_batch(4, config.inputs, config.classes, 1);
  t.y.pop_back();
  const fm::Batch bad{fm::Matrix(mlp.flow(), {4, 7}, std::span<const float>(t.x)), fm::Labels(mlp.flow(), t.y)};
  try {
    mlp.train(std::span(&bad, 1));
    ADD_FAILURE() << "no error for 3 labels of 4 images";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'loss'"), std::string::npos) << what;
    EXPECT_NE(what.find("need a bias of 4 and 4 labels, got 4 and 3"), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MlpFlow, ::testing::Values("host", "sim:1"), backend_name);
