// Bad kernel launches: each is a tessera::Error that names what was wrong.

#include <gtest/gtest.h>

#include <string>
#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>

#include "../tensor/tensor_test_support.hpp"

using namespace tessera;

namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

class ExecErrors : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

TEST_P(ExecErrors, TensorsOfDifferentShapesInOneKernel) {
  Tensor<float, 2> a(memory(), Extent<2>{16, 8}, TensorOptions<2>{}.named("a"));
  Tensor<float, 2> b(memory(), Extent<2>{16, 9}, TensorOptions<2>{}.named("b"));
  const std::string e = error_of([&] { for_each(ex, [](auto x, auto y) { *y = *x; }, a, b); });
  EXPECT_NE(e.find("'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("same sizes and partitions"), std::string::npos) << e;
}

TEST_P(ExecErrors, OneTensorPassedTwice) {
  Tensor<float, 2> a(memory(), Extent<2>{16, 8}, TensorOptions<2>{}.named("a"));
  const std::string e = error_of([&] { for_each(ex, [](auto x, auto y) { *y = 2.0f * *x; }, a, a); });
  EXPECT_NE(e.find("'a' is passed twice"), std::string::npos) << e;
  // Nothing was held or prepared: the tensor is still usable.
  for_each(ex, [](auto x) { *x = 1.0f; }, a);
  EXPECT_EQ(static_cast<float>(a.host(Access::read)(3, 4)), 1.0f);
}

TEST_P(ExecErrors, ALaunchThatStopsHalfwayLeavesItsTensorsUsable) {
  if (accelerators() == 0) GTEST_SKIP() << "needs a device whose memory the second tensor does not fit in";
  // The test devices have 64 MiB: two tensors' blocks are prepared there, the third's is
  // refused. The two must not stay prepared for a kernel that never ran.
  const Extent<1> n{6u << 20};  // 24 MiB of floats per tensor, 12 MiB per block on sim:4
  Tensor<float, 1> a(memory(), n, TensorOptions<1>{}.named("a"));
  Tensor<float, 1> b(memory(), n, TensorOptions<1>{}.named("b"));
  Tensor<float, 1> c(memory(), n, TensorOptions<1>{}.named("c"));
  const std::string e = error_of([&] { for_each(ex, [](auto x, auto y, auto z) { *z = *x + *y; }, a, b, c); });
  EXPECT_NE(e.find("cannot place"), std::string::npos) << e;
  for_each(ex, [](auto x) { *x = 1.0f; }, a);
  EXPECT_EQ(static_cast<float>(a.host(Access::read)(3)), 1.0f);
}

TEST_P(ExecErrors, TensorsPartitionedDifferently) {
  TensorOptions<2> two;
  two.partitions = Extent<2>{1, 2};
  Tensor<float, 2> a(memory(), Extent<2>{16, 8}, TensorOptions<2>{}.named("a"));
  Tensor<float, 2> b(memory(), Extent<2>{16, 8}, two.named("b"));
  const std::string e = error_of([&] { for_each(ex, [](auto x, auto y) { *y = *x; }, a, b); });
  EXPECT_NE(e.find("blocks"), std::string::npos) << e;
}

TEST_P(ExecErrors, TensorsPlacedOnDifferentDevices) {
  if (accelerators() == 0) GTEST_SKIP() << "needs a device besides the host to place a tensor elsewhere";
  TensorOptions<1> on_host;
  on_host.spaces = {0};
  Tensor<float, 1> a(memory(), Extent<1>{64}, TensorOptions<1>{}.named("a"));
  Tensor<float, 1> b(memory(), Extent<1>{64}, on_host.named("b"));
  const std::string e = error_of([&] { for_each(ex, [](auto x, auto y) { *y = *x; }, a, b); });
  EXPECT_NE(e.find("memory space"), std::string::npos) << e;
}

TEST_P(ExecErrors, AGpuKernelWhereTheDataHasNoDevice) {
  TensorOptions<1> on_host;
  on_host.spaces = {0};
  Tensor<float, 1> a(memory(), Extent<1>{64}, on_host.named("a"));
  ExecOptions gpu;
  gpu.kind = ExecKind::gpu;
  const std::string e = error_of([&] { for_each(ex, gpu, [](auto x) { *x = 1; }, a); });
  EXPECT_NE(e.find("lives on the host"), std::string::npos) << e;
  if (accelerators() == 0) {
    EXPECT_NE(e.find("there is no device"), std::string::npos) << e;
  }
}

TEST_P(ExecErrors, ACpuKernelRunsOnTheHostWhereverTheDataIs) {
  Tensor<float, 1> a(memory(), Extent<1>{64}, TensorOptions<1>{}.named("a"));
  ExecOptions cpu;
  cpu.kind = ExecKind::cpu;
  for_each(ex, cpu, [](auto x) { *x = static_cast<float>(x.global_idx(0)); }, a);
  EXPECT_EQ(a.get(Index<1>{63}), 63.0f);
}

TENSOR_TEST_ON_DEVICES(ExecErrors);

}  // namespace
