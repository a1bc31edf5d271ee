// Values that stay on the device: reduce_into a tensor of one site, and tessera::uniform, which
// hands that site's value to every site of a later kernel. A step that reduces, computes the
// next step's coefficient from the total in a one-site kernel and applies it must give the
// same bits whether it runs eagerly (for_each), one step a graph pass, or many steps in one
// pass (where nothing goes through the host between steps on a single device), captured or
// not, on every device set. The values are small integers and powers of two, so every sum
// is exact and every result is compared for equality with a sequential host model.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../tensor/tensor_test_support.hpp"
#include "device_values_model.hpp"

using namespace tessera;
using namespace device_values;

namespace {

class DeviceValues : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
  Scalar scalar(const char* name, double v) {
    Scalar s(memory(), Extent<1>{1}, TensorOptions<1>{}.named(name));
    s.fill_from(&v);
    return s;
  }
  /// One partition per accelerator, each cut into `blocks` blocks.
  Field field(const char* name, std::size_t blocks = 2) {
    TensorOptions<2> o;
    o.partitions = Extent<2>{1, std::max<std::size_t>(1, accelerators())};
    o.sub_partitions = Extent<2>{1, blocks};
    return Field(memory(), Extent<2>{40, 24}, o.named(name));
  }
  static double read(const Scalar& s) {
    double v = 0;
    s.gather_to(&v);
    return v;
  }
  /// The graph's reduction finals.
  static std::vector<const Node*> finals(const Graph& g) {
    std::vector<const Node*> found;
    for (std::size_t p = 0; p < g.num_passes(); ++p)
      for (std::size_t i = 0; i < g.pass(p).size(); ++i)
        if (g.role_of(g.pass(p).node(i)) == GraphNodeRole::reduce_final) found.push_back(&g.pass(p).node(i));
    return found;
  }
};

/// Each site contributes its value.
struct Share {
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, C c) const {
    *c = *u;
  }
};
/// Sets each site to a uniform value, or contributes it.
struct Use {
  template <typename U>
  TESSERA_HOST_DEVICE void operator()(U u, double s) const {
    *u = s;
  }
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, C c) const {
    *c = *u;
  }
};

TEST_P(DeviceValues, EagerStepsMatchTheModel) {
  for (const std::size_t blocks : {1, 2}) {
    Field u = field("u", blocks);
    fill_initial(u);
    Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
    for (int k = 0; k < 5; ++k) {
      for_each(ex, NextStep{}, read_only(largest), write_only(step), count);
      for_each(ex, Advance{}, u, uniform(step), reduce_into(largest, Max{}));
    }
    expect_model(u, read(largest), read(step), read(count), model(40, 24, 5), GetParam());
  }
}

TEST_P(DeviceValues, ManyStepsInOnePassMatchOneStepAPass) {
  constexpr int per_pass = 4, passes = 3;
  for (const std::size_t blocks : {1, 2})
    for (const bool capture : {false, true}) {
      for (const int steps_in_graph : {1, per_pass}) {
        Field u = field("u", blocks);
        fill_initial(u);
        Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
        Graph g("steps");
        for (int k = 0; k < steps_in_graph; ++k)
          g.then_split(NextStep{}, read_only(largest), write_only(step), count)
              .then_split(Advance{}, u, uniform(step), reduce_into(largest, Max{}));
        if (capture) g.capture();
        // A reduction of one block (one device, one process) folds into the tensor where the block
        // runs: no final node, nothing on the host between a step's kernels and the next step's.
        const bool one_block = u.num_blocks() == 1;
        EXPECT_EQ(g.to_dot().find("final") == std::string::npos, one_block) << g.to_dot();
        // Several blocks: their partials are combined where the tensor lives, by a node on its
        // device's stream where it has one (no host function between the steps there either).
        for (const Node* f : finals(g)) EXPECT_EQ(f->stream() != nullptr, accelerators() > 0) << GetParam();
        const int runs = passes * (per_pass / steps_in_graph);
        for (int run = 1; run <= runs; ++run) {
          g.run(ex).get();
          // Read on the host between runs: a replay must leave the memory layer's bookkeeping as
          // running the nodes would, or this read (and the next) would see the recording's values.
          ASSERT_EQ(read(count), static_cast<double>(run * steps_in_graph)) << GetParam() << " run " << run;
        }
        if (capture && accelerators() > 0) {
          // Nothing is copied from outside the recording in each run (the partials are combined
          // on the device; the step each device reads is copied there inside the recording, after
          // the kernel that writes it): the recording replays.
          EXPECT_EQ(g.pass(0).capture_refusal(), "") << GetParam();
          EXPECT_EQ(g.pass(0).recordings(), 1u) << GetParam() << ": recorded once, then replayed";
        }
        expect_model(u, read(largest), read(step), read(count), model(40, 24, passes * per_pass),
                     GetParam() + ": " + std::to_string(u.num_blocks()) + " block(s), " +
                         std::to_string(steps_in_graph) + " step(s) a pass" + (capture ? ", captured" : ""));
      }
    }
}

TEST_P(DeviceValues, ASumIntoATensorEqualsTheReductionResult) {
  Field u = field("u");
  fill_initial(u);
  Scalar total = scalar("total", -1);
  ReductionResult<double> expected;
  reduce(ex, u, expected, Sum{});
  for_each(ex, Share{}, read_only(u), reduce_into(total, Sum{}));
  EXPECT_EQ(read(total), expected.value());
  Scalar again = scalar("again", -1);
  Graph g("sum");
  g.split(Share{}, read_only(u), reduce_into(again, Sum{}));
  g.run(ex).get();
  EXPECT_EQ(read(again), expected.value());
}

TEST_P(DeviceValues, ATensorOfMoreThanOneSiteIsRefused) {
  Field u = field("u");
  Tensor<double, 1> two(memory(), Extent<1>{2}, TensorOptions<1>{}.named("two"));
  auto names = [](const char* what, const char* tensor) {
    return [=](const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(what), std::string::npos) << m;
      EXPECT_NE(m.find(tensor), std::string::npos) << m;
      EXPECT_NE(m.find("one site"), std::string::npos) << m;
    };
  };
  try {
    for_each(ex, Use{}, u, uniform(two));
    ADD_FAILURE() << "uniform of two sites ran";
  } catch (const Error& e) {
    names("uniform", "'two'")(e);
  }
  try {
    for_each(ex, Use{}, read_only(u), reduce_into(two, Sum{}));
    ADD_FAILURE() << "reduce_into two sites ran";
  } catch (const Error& e) {
    names("reduce_into", "'two'")(e);
  }
  try {
    Graph g("refused");
    g.split(Use{}, read_only(u), reduce_into(two, Sum{}));
    ADD_FAILURE() << "Graph::split took reduce_into two sites";
  } catch (const Error& e) {
    names("Graph::split", "'two'")(e);
  }
  Scalar one = scalar("one", 1);
  try {
    for_each(ex, Use{}, one, uniform(one));
    ADD_FAILURE() << "a tensor passed as itself and as uniform ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("passed twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(one), 1.0);  // nothing ran
}

TENSOR_TEST_ON_DEVICES(DeviceValues);

// docs/graph.md's example: 32 steps whose coefficient comes from the last step's total, in runs
// of 8 steps.
TEST(DeviceValuesDocs, StepsWithoutTheHost) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("sim:1");
  tessera::MemoryManager memory(devices);
  tessera::Executor ex;
  tessera::Tensor<double, 2> u(memory, tessera::Extent<2>{40, 24});
  fill_initial(u);
  // DOC device-values begin
  // One-site tensors that live beside u: the largest value, the step it sets, a step count.
  tessera::TensorOptions<1> one;
  tessera::Tensor<double, 1> largest(memory, tessera::Extent<1>{1}, one.named("largest"));
  tessera::Tensor<double, 1> step(memory, tessera::Extent<1>{1}, one.named("step"));
  tessera::Tensor<double, 1> count(memory, tessera::Extent<1>{1}, one.named("count"));
  const double start[3] = {16.0, 0.0, 0.0};
  largest.fill_from(&start[0]), step.fill_from(&start[1]), count.fill_from(&start[2]);

  tessera::Graph g("steps");
  for (int k = 0; k < 8; ++k)  // 8 steps a run: on a device, none waits for the host
    g.then_split(NextStep{}, tessera::read_only(largest), tessera::write_only(step), count)
        .then_split(Advance{}, u, tessera::uniform(step), tessera::reduce_into(largest, tessera::Max{}));
  g.run_n(ex, 4).get();

  double steps = 0;
  count.gather_to(&steps);  // 32
  // DOC device-values end
  double l = 0, s = 0;
  largest.gather_to(&l);
  step.gather_to(&s);
  expect_model(u, l, s, steps, model(40, 24, 32), "docs example");
}

}  // namespace
