// Each fuser gives the values of the unfused graph with fewer kernel launches, on host, sim:1
// and sim:4; fusion leaves alone what it must not fuse.

#include "flow_test_support.hpp"

#include <cmath>

namespace flow = tessera::flow;
using flow_test::sample;

namespace {

struct Result {
  std::vector<double> values;
  flow::FlowStats stats;
  std::size_t operations = 0;
};

template <typename Build>
Result run(const std::string& spec, bool fusion, Build build) {
  auto devices = tessera::DeviceSet::select(spec);
  flow::FlowOptions o;
  o.fusion = fusion;
  flow::Flow f(devices, o);
  Result r;
  build(f, r.values);
  f.wait();
  r.stats = f.stats();
  r.operations = f.operations().size();
  return r;
}

class Fusion : public ::testing::TestWithParam<std::string> {};

void expect_fused_equal(const Result& plain, const Result& fused, double tolerance) {
  ASSERT_EQ(plain.values.size(), fused.values.size());
  ASSERT_FALSE(plain.values.empty());
  for (std::size_t i = 0; i < plain.values.size(); ++i)
    EXPECT_NEAR(fused.values[i], plain.values[i], tolerance * (1 + std::abs(plain.values[i]))) << i;
  EXPECT_EQ(plain.stats.fused, 0u);
  EXPECT_EQ(fused.stats.fused, 1u);
  EXPECT_LT(fused.stats.kernels, plain.stats.kernels);
  EXPECT_LT(fused.stats.firings, plain.stats.firings);
  EXPECT_EQ(fused.operations + 1, plain.operations);
}

}  // namespace

TEST_P(Fusion, MapThenMapBecomesOneMap) {
  const auto x = sample<double>(30000, 1);
  auto build = [&](flow::Flow& f, std::vector<double>& out) {
    auto& a = flow::map<double>(f, "twice", [](double v) { return 2 * v; });
    auto& b = flow::map<double>(f, "plus one", [](double v) { return v + 1; });
    flow::connect(a.output, b.input);
    f.on_receive(b.output, [&](const flow::Vector<double>& r) { out = r.to_vector(); });
    f.send(a.input, flow::Vector<double>(f, x));
  };
  const Result plain = run(GetParam(), false, build), fused = run(GetParam(), true, build);
  expect_fused_equal(plain, fused, 0);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(fused.values[i], 2 * x[i] + 1);
}

TEST_P(Fusion, TransposeIntoMatrixProductReadsTheOperandTransposed) {
  const std::size_t m = 40, k = 30, n = 20;
  const auto a = sample<double>(k * m, 2), b = sample<double>(n * k, 3);
  for (const bool right : {false, true}) {
    auto build = [&](flow::Flow& f, std::vector<double>& out) {
      auto& t = f.add<flow::Transpose<double>>();
      auto& p = f.add<flow::MatrixProduct<double>>();
      flow::connect(t.output, right ? p.right : p.left);
      f.on_receive(p.output, [&](const flow::Matrix<double>& r) { out = r.to_vector(); });
      const auto set = f.new_input_set();
      if (!right) {
        f.send(t.input, flow::Matrix<double>(f, {k, m}, a), set);  // left = a^T, m x k
        f.send(p.right, flow::Matrix<double>(f, {k, n}, std::vector<double>(b.begin(), b.begin() + k * n)), set);
      } else {
        f.send(p.left, flow::Matrix<double>(f, {m, k}, a), set);
        f.send(t.input, flow::Matrix<double>(f, {n, k}, b), set);  // right = b^T, k x n
      }
    };
    const Result plain = run(GetParam(), false, build), fused = run(GetParam(), true, build);
    expect_fused_equal(plain, fused, 1e-12);
  }
}

TEST_P(Fusion, MapAfterMatrixProductBecomesItsEpilogue) {
  const std::size_t m = 64, k = 48, n = 40;
  const auto a = sample<double>(m * k, 4), b = sample<double>(k * n, 5);
  auto build = [&](flow::Flow& f, std::vector<double>& out) {
    auto& p = f.add<flow::MatrixProduct<double>>();
    auto& relu = flow::map<double, 2>(f, "relu", [](double v) { return v > 0 ? v : 0.0; });
    flow::connect(p.output, relu.input);
    f.on_receive(relu.output, [&](const flow::Matrix<double>& r) { out = r.to_vector(); });
    const auto set = f.new_input_set();
    f.send(p.left, flow::Matrix<double>(f, {m, k}, a), set);
    f.send(p.right, flow::Matrix<double>(f, {k, n}, b), set);
  };
  const Result plain = run(GetParam(), false, build), fused = run(GetParam(), true, build);
  expect_fused_equal(plain, fused, 0);
}

TEST_P(Fusion, MapThenReduceIsOnePass) {
  const auto x = sample<double>(100003, 6);
  auto build = [&](flow::Flow& f, std::vector<double>& out) {
    auto& sq = flow::map<double>(f, "square", [](double v) { return v * v; });
    auto& sum = flow::reduce<double>(f, "sum", 0.0, [](double p, double q) { return p + q; });
    flow::connect(sq.output, sum.input);
    f.on_receive(sum.output, [&](const flow::Scalar<double>& r) { out = {r.value()}; });
    f.send(sq.input, flow::Vector<double>(f, x));
  };
  const Result plain = run(GetParam(), false, build), fused = run(GetParam(), true, build);
  expect_fused_equal(plain, fused, 0);  // the same fold over the same values: the same bits
}

INSTANTIATE_TEST_SUITE_P(Backends, Fusion, ::testing::ValuesIn(flow_test::backends()), flow_test::backend_name);

TEST(FusionLimits, AResultSeenElsewhereIsNotFused) {
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  auto& a = flow::map<double>(f, "twice", [](double v) { return 2 * v; });
  auto& b = flow::map<double>(f, "plus one", [](double v) { return v + 1; });
  flow::connect(a.output, b.input);
  std::vector<double> mid, end;
  f.on_receive(a.output, [&](const flow::Vector<double>& r) { mid = r.to_vector(); });
  f.on_receive(b.output, [&](const flow::Vector<double>& r) { end = r.to_vector(); });
  f.send(a.input, flow::Vector<double>(f, std::vector<double>{1, 2, 3}));
  f.wait();
  EXPECT_EQ(f.stats().fused, 0u);
  EXPECT_EQ(mid, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(end, (std::vector<double>{3, 5, 7}));
}

TEST(FusionLimits, PortsOfFusedOperationsStillWork) {
  // Sending into the first map's input and receiving from the second's after fusion: both
  // forward to the fused operation.
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  auto& a = flow::map<double>(f, "twice", [](double v) { return 2 * v; });
  auto& b = flow::map<double>(f, "plus one", [](double v) { return v + 1; });
  flow::connect(a.output, b.input);
  std::vector<std::vector<double>> got;
  f.on_receive(b.output, [&](const flow::Vector<double>& r) { got.push_back(r.to_vector()); });
  f.send(a.input, flow::Vector<double>(f, std::vector<double>{1}));
  f.wait();
  f.on_receive(b.output, [&](const flow::Vector<double>& r) { got.push_back(r.to_vector()); });  // after fusion
  f.send(a.input, flow::Vector<double>(f, std::vector<double>{5}));
  f.wait();
  EXPECT_EQ(f.stats().fused, 1u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], std::vector<double>{3});
  EXPECT_EQ(got[1], std::vector<double>{11});
  EXPECT_EQ(got[2], std::vector<double>{11});
  EXPECT_THROW(flow::connect(a.output, b.input), tessera::Error);
}
