// A program that links a .cu and a .cpp user of one kernel (odr_doubling.hpp) keeps both
// bodies: the nvcc one launches on the GPU, the host one refuses a GPU block with its error. Were
// the instantiations merged at link time, both calls would behave alike.

#include "cuda_test_support.hpp"
#include "odr_doubling.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace tessera;

constexpr std::size_t n = 64;

void fill(Tensor<float, 1>& t) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  t.fill_from(v.data());
}

constexpr float doubled_twice_sum = 4.0f * n * (n + 1) / 2;  // exact in float

TEST(CudaOdr, BothUsersRunOnTheHost) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  Executor ex;
  Tensor<float, 1> t(memory, Extent<1>{n}, TensorOptions<1>{}.named("t"));
  fill(t);
  EXPECT_EQ(odr_test::double_twice_and_sum_host(ex, t), doubled_twice_sum);
  fill(t);
  EXPECT_EQ(odr_test::double_twice_and_sum_cuda(ex, t), doubled_twice_sum);
}

TEST(CudaOdr, OnAGpuTheCuUserLaunchesAndTheCppUserRefuses) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex;
  Tensor<float, 1> t(memory, Extent<1>{n}, TensorOptions<1>{}.named("t"));
  ASSERT_NE(t.space(0), 0u) << "the tensor should live on the GPU";
  fill(t);
  EXPECT_EQ(odr_test::double_twice_and_sum_cuda(ex, t), doubled_twice_sum);
  fill(t);
  try {
    (void)odr_test::double_twice_and_sum_host(ex, t);
    ADD_FAILURE() << "the .cpp user ran a GPU block: its for_each was replaced by the nvcc one at link time";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvcc"), std::string::npos) << e.what();
  }
}

std::vector<float> ramp() {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

std::vector<float> doubled(std::vector<float> v) {
  for (float& x : v) x *= 2.0f;
  return v;
}

TEST(CudaOdr, BothKernelTaskUsersRunOnTheHost) {
  DeviceSet devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  EXPECT_EQ(odr_test::double_by_task_host(rt, ramp(), TaskKind::cpu), doubled(ramp()));
  EXPECT_EQ(odr_test::double_by_task_cuda(rt, ramp(), TaskKind::cpu), doubled(ramp()));
}

TEST(CudaOdr, OnAGpuTheCuKernelTaskLaunchesAndTheCppOneRefuses) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  TaskRuntime rt(devices);
  EXPECT_EQ(odr_test::double_by_task_cuda(rt, ramp(), TaskKind::gpu), doubled(ramp()));
  try {
    (void)odr_test::double_by_task_host(rt, ramp(), TaskKind::gpu);
    ADD_FAILURE() << "the .cpp kernel_task ran on the GPU: its TaskOf was replaced by the nvcc one at link time";
  } catch (const TaskError& e) {
    EXPECT_NE(std::string(e.what()).find("nvcc"), std::string::npos) << e.what();
  }
}

}  // namespace
