// Values that stay on a GPU (tests/graph/test_device_values.cpp on sim devices): reduce_into a
// one-site tensor folds into device memory, a one-site kernel turns it into the next step's
// coefficient, and tessera::uniform hands that to every thread, so a graph of several steps runs
// them without the host; captured or not, eager or graphed, the bits are the host model's.
// Skips where no GPU is present.
#include "cuda_test_support.hpp"

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <string>

#include "../graph/device_values_model.hpp"

namespace {

using namespace device_values;

struct OnGpu : ::testing::Test {
  void SetUp() override {
    std::string why;
    if (!tessera_test::have_gpu(why)) GTEST_SKIP() << why;
    devices = std::make_unique<tessera::DeviceSet>(tessera::DeviceSet::cuda(tessera_test::small_cuda_options()));
    memory = std::make_unique<tessera::MemoryManager>(*devices);
  }
  void TearDown() override {
    if (memory) memory->synchronize();
    memory.reset();
    devices.reset();
  }
  Scalar scalar(const char* name, double v) {
    Scalar s(*memory, tessera::Extent<1>{1}, tessera::TensorOptions<1>{}.named(name));
    s.fill_from(&v);
    return s;
  }
  static double read(const Scalar& s) {
    double v = 0;
    s.gather_to(&v);
    return v;
  }
  std::unique_ptr<tessera::DeviceSet> devices;
  std::unique_ptr<tessera::MemoryManager> memory;
  tessera::Executor ex;
};

TEST_F(OnGpu, EagerStepsMatchTheModel) {
  Field u(*memory, tessera::Extent<2>{300, 70}, tessera::TensorOptions<2>{}.named("u"));
  ASSERT_NE(u.space(0), 0u);
  fill_initial(u);
  Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
  for (int k = 0; k < 5; ++k) {
    tessera::for_each(ex, NextStep{}, tessera::read_only(largest), tessera::write_only(step), count);
    tessera::for_each(ex, Advance{}, u, tessera::uniform(step), tessera::reduce_into(largest, tessera::Max{}));
  }
  expect_model(u, read(largest), read(step), read(count), model(300, 70, 5), "eager");
}

TEST_F(OnGpu, ManyStepsInOnePassMatchTheModelCapturedOrNot) {
  for (const std::size_t blocks : {1, 2})
    for (const bool capture : {false, true}) {
      tessera::TensorOptions<2> o;
      o.sub_partitions = tessera::Extent<2>{1, blocks};
      Field u(*memory, tessera::Extent<2>{300, 70}, o.named("u"));
      ASSERT_EQ(u.num_blocks(), blocks);
      fill_initial(u);
      Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
      tessera::Graph g("steps");
      for (int k = 0; k < 4; ++k)
        g.then_split(NextStep{}, tessera::read_only(largest), tessera::write_only(step), count)
            .then_split(Advance{}, u, tessera::uniform(step), tessera::reduce_into(largest, tessera::Max{}));
      if (capture) g.capture();
      if (blocks == 1) {
        EXPECT_EQ(g.to_dot().find("final"), std::string::npos) << "one block: the fold writes the tensor";
      } else {
        // Two blocks: a final node on the GPU's stream combines their partials (pinned) there.
        for (std::size_t i = 0; i < g.pass(0).size(); ++i)
          if (g.role_of(g.pass(0).node(i)) == tessera::GraphNodeRole::reduce_final)
            EXPECT_NE(g.pass(0).node(i).stream(), nullptr) << g.pass(0).node(i).name();
      }
      for (int run = 1; run <= 5; ++run) {
        g.run(ex).get();
        // Read on the host between runs: a replay must leave the bookkeeping as running it would.
        expect_model(u, read(largest), read(step), read(count), model(300, 70, 4 * run),
                     std::string(capture ? "captured" : "plain") + ", " + std::to_string(blocks) + " block(s), run " +
                         std::to_string(run));
      }
      if (capture) {
        EXPECT_EQ(g.pass(0).capture_refusal(), "");
        EXPECT_GT(g.pass(0).recordings(), 0u);
      }
    }
}

}  // namespace
