#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>

#include <gtest/gtest.h>

namespace flow = tessera::flow;

namespace {
struct AddOne : flow::Operation {
  flow::InputPort<int> input{*this, "input"};
  flow::OutputPort<int> output{*this, "output"};
  AddOne() : Operation("add one") {}
  void fire(flow::Context& c) override { c.emit(output, c.get(input) + 1); }
};
}  // namespace

TEST(FlowModel, ChainOfScalars) {
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  auto& a = f.add<AddOne>();
  auto& b = f.add<AddOne>();
  flow::connect(a.output, b.input);
  std::vector<int> got;
  f.on_receive(b.output, [&](int v) { got.push_back(v); });
  for (int i = 0; i < 100; ++i) f.send(a.input, i);
  f.wait();
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], i + 2);
}
