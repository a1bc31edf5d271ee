// Bad input to a flow is a tessera::Error naming what was wrong, and the flow stays usable.

#include "flow_test_support.hpp"

#include "../support/error_of.hpp"

namespace flow = tessera::flow;
using tessera::test::error_of;

namespace {
auto host() { return tessera::DeviceSet::select("host"); }

struct Thrower : flow::Operation {
  flow::InputPort<int> input{*this, "input"};
  flow::OutputPort<int> output{*this, "output"};
  Thrower() : Operation("picky") {}
  void fire(flow::Context& c) override {
    if (c.get(input) == 13) throw std::runtime_error("13 is unlucky");
    c.emit(output, c.get(input));
  }
};
// x -> 2x: a cycle through it never settles.
struct Double : flow::Operation {
  flow::InputPort<double> input{*this, "input"};
  flow::OutputPort<double> output{*this, "output"};
  Double() : Operation("double") {}
  void fire(flow::Context& c) override { c.emit(output, 2 * c.get(input)); }
};
}  // namespace

TEST(FlowErrors, SendingIntoAnInputFedByADataOperation) {
  auto devices = host();
  flow::Flow f(devices);
  auto& a = flow::map<double>(f, "a", [](double v) { return v; });
  auto& b = flow::map<double>(f, "b", [](double v) { return v; });
  flow::connect(a.output, b.input);
  const std::string e = error_of([&] { f.send(b.input, flow::Vector<double>(f, std::vector<double>{1})); });
  EXPECT_NE(e.find("cannot send into b.input: it is fed by a.output, a data operation"), std::string::npos) << e;
}

TEST(FlowErrors, AFiringThatThrowsIsReportedAndTheFlowGoesOn) {
  auto devices = host();
  flow::Flow f(devices);
  auto& t = f.add<Thrower>();
  std::vector<int> got;
  f.on_receive(t.output, [&](int v) { got.push_back(v); });
  for (int v : {12, 13, 14}) f.send(t.input, v);
  const std::string e = error_of([&] { f.wait(); });
  EXPECT_NE(e.find("operation 'picky' failed: 13 is unlucky"), std::string::npos) << e;
  EXPECT_EQ(got, (std::vector<int>{12, 14}));
  f.send(t.input, 15);
  EXPECT_NO_THROW(f.wait());
  EXPECT_EQ(got.back(), 15);
}

TEST(FlowErrors, AThrowingLambdaOnADeviceLeaksNothing) {
  auto devices = tessera::DeviceSet::select("sim:1");
  {
    flow::Flow f(devices);
    auto& p = f.add<flow::MatrixProduct<double>>("product");
    const auto set = f.new_input_set();
    f.send(p.left, flow::Matrix<double>(f, {2, 3}, std::vector<double>(6, 1.0)), set);
    f.send(p.right, flow::Matrix<double>(f, {2, 3}, std::vector<double>(6, 1.0)), set);
    const std::string e = error_of([&] { f.wait(); });
    EXPECT_NE(e.find("'product' multiplies a 2x3 operand by a 2x3 one"), std::string::npos) << e;
    f.memory().synchronize();
    EXPECT_EQ(f.memory().bytes_in_use(1), 0u);
  }
}

TEST(FlowErrors, ValuesThatCanNeverFire) {
  auto devices = host();
  flow::Flow f(devices);
  auto& m = f.add<flow::Merger<int, int>>("join");
  f.send(m.first, 1);
  const std::string e = error_of([&] { f.wait(); });
  EXPECT_NE(e.find("1 value(s) wait at inputs whose operations can never fire: join.first (1)"), std::string::npos)
      << e;
  std::tuple<int, int> got{};
  const std::string e2 = error_of([&] { f.on_receive(m.output, [&](const std::tuple<int, int>& t) { got = t; }); });
  EXPECT_NE(e2.find("cannot add an on_receive callback while values are in flight"), std::string::npos) << e2;
  f.send(m.second, 2);  // the join completes: nothing was lost
  EXPECT_NO_THROW(f.wait());
  EXPECT_EQ(got, std::make_tuple(0, 0)) << "no callback was registered";
}

TEST(FlowErrors, RemovingAnOperationWhileValuesAreInFlight) {
  auto devices = host();
  flow::Flow f(devices);
  auto& m = f.add<flow::Merger<int, int>>("join");
  f.send(m.first, 1);
  const std::string e = error_of([&] { f.remove(m); });
  EXPECT_NE(e.find("cannot remove operation 'join' while values are in flight"), std::string::npos) << e;
  f.send(m.second, 2);
  f.wait();
  EXPECT_NO_THROW(f.remove(m));
  EXPECT_EQ(f.operations().size(), 0u);
}

TEST(FlowErrors, ShapesThatDoNotMatch) {
  auto devices = host();
  flow::Flow f(devices);
  auto& add = flow::map2<double, double>(f, "add", [](double a, double b) { return a + b; });
  const auto set = f.new_input_set();
  f.send(add.first, flow::Vector<double>(f, std::vector<double>(3, 1.0)), set);
  f.send(add.second, flow::Vector<double>(f, std::vector<double>(4, 1.0)), set);
  const std::string e = error_of([&] { f.wait(); });
  EXPECT_NE(e.find("'add' got inputs of different shapes, (3) and (4)"), std::string::npos) << e;
  const std::string e2 = error_of([&] { flow::Matrix<double>(f, {2, 2}, std::vector<double>(3, 1.0)); });
  EXPECT_NE(e2.find("expected 4 values, got 3"), std::string::npos) << e2;
}

TEST(FlowErrors, ACycleThatDoesNotConverge) {
  auto devices = host();
  flow::Flow f(devices);
  auto& approx = f.add<flow::Approximator<double>>(
      "diverging", [](double a, double b) { return std::abs(a - b); }, 1e-9, 20);
  auto& d = f.add<Double>();
  flow::connect(approx.iterate, d.input);
  flow::connect(d.output, approx.feedback);
  f.send(approx.input, 1.0);
  const std::string e = error_of([&] { f.wait(); });
  EXPECT_NE(e.find("'diverging' did not converge within 20 iterations"), std::string::npos) << e;
  // The failure dropped that value; a second one left waiting is discarded, and the flow goes on.
  auto& join = f.add<flow::Merger<int, int>>("join");
  f.send(join.first, 1);
  EXPECT_NE(error_of([&] { f.wait(); }).find("join.first"), std::string::npos);
  EXPECT_EQ(f.discard_pending(), 1u);
  EXPECT_NO_THROW(f.wait());
  f.send(approx.input, 0.0);  // 2 * 0 == 0: converges at once
  EXPECT_NO_THROW(f.wait());
}

TEST(FlowErrors, ACycleMayStopAtItsBudgetInstead) {
  auto devices = host();
  flow::Flow f(devices);
  auto& approx = f.add<flow::Approximator<double>>(
      "budget", [](double a, double b) { return std::abs(a - b); }, 1e-9, 20, flow::AtLimit::emit);
  auto& d = f.add<Double>();
  flow::connect(approx.iterate, d.input);
  flow::connect(d.output, approx.feedback);
  std::vector<double> got;
  f.on_receive(approx.output, [&](double v) { got.push_back(v); });
  f.send(approx.input, 1.0);
  EXPECT_NO_THROW(f.wait());
  EXPECT_EQ(got, std::vector<double>{1048576.0});  // 2^20 after 20 rounds
  EXPECT_EQ(approx.stopped(), 1u);
}

TEST(FlowErrors, PinnedToASpaceThatDoesNotExist) {
  auto devices = tessera::DeviceSet::select("sim:1");
  flow::Flow f(devices);
  auto& sq = flow::map<double>(f, "square", [](double v) { return v * v; });
  sq.pin(5);
  f.send(sq.input, flow::Vector<double>(f, std::vector<double>{2}));
  const std::string e = error_of([&] { f.wait(); });
  EXPECT_NE(e.find("square is pinned to space 5, but the flow has 1 accelerator(s)"), std::string::npos) << e;
}

TEST(FlowErrors, PortsOfAnotherFlowOrOfNone) {
  auto devices = host();
  flow::Flow f(devices), g(devices);
  auto& a = flow::map<double>(f, "a", [](double v) { return v; });
  auto& b = flow::map<double>(g, "b", [](double v) { return v; });
  const std::string e = error_of([&] { flow::connect(a.output, b.input); });
  EXPECT_NE(e.find("cannot connect b.input: its operation belongs to another flow"), std::string::npos) << e;
  const std::string e2 = error_of([&] { g.send(a.input, flow::Vector<double>(g, std::vector<double>{1})); });
  EXPECT_NE(e2.find("does not belong to this flow"), std::string::npos) << e2;
  Thrower loose;
  const std::string e3 = error_of([&] { f.on_receive(loose.output, [](int) {}); });
  EXPECT_NE(e3.find("operation 'picky' belongs to no flow"), std::string::npos) << e3;
}

TEST(FlowErrors, AReadinessRuleThatNamesAnEmptyInput) {
  struct Greedy : flow::Operation {
    flow::InputPort<int> a{*this, "a"};
    flow::InputPort<int> b{*this, "b"};
    flow::OutputPort<int> output{*this, "output"};
    Greedy() : Operation("greedy") {}
    std::uint64_t ready(std::span<const std::size_t> queued) const override { return queued[0] > 0 ? 3 : 0; }
    void fire(flow::Context& c) override { c.emit(output, c.get(a)); }
  };
  auto devices = host();
  flow::Flow f(devices);
  auto& g = f.add<Greedy>();
  const std::string e = error_of([&] { f.send(g.a, 1); });
  EXPECT_NE(e.find("greedy's readiness rule named input 1, which holds no value"), std::string::npos) << e;
  f.send(g.b, 2);  // now both hold a value: it fires
  EXPECT_NO_THROW(f.wait());
  EXPECT_EQ(f.stats().firings, 1u);
}
