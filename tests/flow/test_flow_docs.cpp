// The examples of docs/flow.md, compiled and checked (tests/docs/check_snippets.cmake keeps the
// page and this file word for word the same).

#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace flow = tessera::flow;

TEST(FlowDocs, FirstFlow) {
  // DOC flow-first begin
  auto devices = tessera::DeviceSet::select("sim:2");  // or "host", "cuda", TESSERA_DEVICES
  flow::Flow f(devices);
  auto& square = flow::map<double>(f, "square", [](double x) { return x * x; });
  auto& total = flow::reduce<double>(f, "sum", 0.0, [](double a, double b) { return a + b; });
  flow::connect(square.output, total.input);  // fused into one pass on the first send
  double sum = 0;
  f.on_receive(total.output, [&](const flow::Scalar<double>& s) { sum = s.value(); });
  f.send(square.input, flow::Vector<double>(f, std::vector<double>{1, 2, 3, 4}));
  f.wait();  // sum == 30
  // DOC flow-first end
  EXPECT_EQ(sum, 30);
  EXPECT_EQ(f.stats().fused, 1u);
}

TEST(FlowDocs, CustomOperation) {
  // DOC flow-operation begin
  struct Scale : flow::Operation {
    flow::InputPort<flow::Vector<double>> input{*this, "input"};
    flow::OutputPort<flow::Vector<double>> output{*this, "output"};
    double factor;
    Scale(std::string name, double a) : Operation(std::move(name)), factor(a) {}
    void fire(flow::Context& c) override {
      const flow::Vector<double>& x = c.get(input);
      flow::Allocated<double, 1> y = c.allocate<double>(x.shape());  // in the firing's memory space
      double* py = y.data;
      const double* px = c.read(x);  // copied there first if it is not valid there
      c.launch("scale", x.size(), [px, py, a = factor](std::size_t i) { py[i] = a * px[i]; });
      c.emit(output, std::move(y.array));
    }
  };
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  auto& triple = f.add<Scale>("triple", 3.0);
  std::vector<double> got;
  f.on_receive(triple.output, [&](const flow::Vector<double>& v) { got = v.to_vector(); });
  f.send(triple.input, flow::Vector<double>(f, std::vector<double>{1, 2}));
  f.wait();  // got == {3, 6}
  // DOC flow-operation end
  EXPECT_EQ(got, (std::vector<double>{3, 6}));
}

TEST(FlowDocs, Cycle) {
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  // DOC flow-cycle begin
  using State = std::tuple<flow::Matrix<double>, flow::Vector<double>>;  // (M, v)
  auto l1 = [](const State& a, const State& b) {
    const auto x = std::get<1>(a).to_vector(), y = std::get<1>(b).to_vector();
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) d += std::abs(x[i] - y[i]);
    return d;
  };
  auto& steady = f.add<flow::Approximator<State>>("steady", l1, 1e-12);
  auto& split = f.add<flow::Splitter<flow::Matrix<double>, flow::Vector<double>>>();
  auto& step = f.add<flow::MatrixVectorProduct<double>>();
  auto& merge = f.add<flow::Merger<flow::Matrix<double>, flow::Vector<double>>>();
  flow::connect(steady.iterate, split.input);
  flow::connect(split.first, step.left);
  flow::connect(split.first, merge.first);
  flow::connect(split.second, step.right);
  flow::connect(step.output, merge.second);
  flow::connect(merge.output, steady.feedback);  // the cycle
  std::vector<double> pi;
  f.on_receive(steady.output, [&](const State& s) { pi = std::get<1>(s).to_vector(); });
  const std::vector<double> m{0.9, 0.5, 0.1, 0.5};  // column-stochastic 2 x 2
  f.send(steady.input, State(flow::Matrix<double>(f, {2, 2}, m), flow::Vector<double>(f, {0.5, 0.5})));
  f.wait();  // pi == {5/6, 1/6}
  // DOC flow-cycle end
  ASSERT_EQ(pi.size(), 2u);
  EXPECT_NEAR(pi[0], 5.0 / 6, 1e-11);
  EXPECT_NEAR(pi[1], 1.0 / 6, 1e-11);
}

TEST(FlowDocs, Placement) {
  // DOC flow-placement begin
  auto devices = tessera::DeviceSet::select("sim:4");
  flow::FlowOptions options;
  options.placement = flow::Placement::per_input_set;  // or data_affine (the default), host
  flow::Flow f(devices, options);
  auto& square = flow::map<double>(f, "square", [](double x) { return x * x; });
  for (int s = 0; s < 8; ++s)  // eight input sets, two per device
    f.send(square.input, flow::Vector<double>(f, std::vector<double>(1000, s)));
  f.wait();
  const flow::FlowStats stats = f.stats();  // firings_per_space == {0, 2, 2, 2, 2}
  // DOC flow-placement end
  EXPECT_EQ(stats.firings_per_space, (std::vector<std::size_t>{0, 2, 2, 2, 2}));
}
