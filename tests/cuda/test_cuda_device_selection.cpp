// Selecting CUDA devices: `cuda`, `cuda:0`, the default, their streams and description, and
// clear errors for a missing ordinal, a malformed list, or a machine without a GPU.
#include "cuda_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <cstdlib>

using namespace tessera;

namespace {
std::string error_of(std::string_view spec) {
  try {
    DeviceSet::select(spec);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error for '" << spec << "'";
  return {};
}
}  // namespace

TEST(CudaSelection, ThisBuildHasTheBackend) { EXPECT_TRUE(DeviceSet::has_cuda_backend()); }

TEST(CudaSelection, MalformedListsAreClearErrors) {
  EXPECT_NE(error_of("cuda:").find("'cuda:' needs GPU ordinals"), std::string::npos);
  EXPECT_NE(error_of("cuda:x").find("the GPU ordinal 'x' is not a number"), std::string::npos);
  EXPECT_NE(error_of("cuda:0,,1").find("the GPU ordinal '' is not a number"), std::string::npos);
}

TEST(CudaSelection, WithoutAGpuCudaIsAClearErrorAndTheDefaultIsTheHost) {
  std::string why;
  if (tessera_test::have_gpu(why)) GTEST_SKIP() << "a GPU is present: covered by EveryGpuOrTheOnesNamed";
  const std::string all = error_of("cuda");
  EXPECT_NE(all.find("device selection 'cuda': CUDA devices were requested but the CUDA runtime found no"),
            std::string::npos)
      << all;
  EXPECT_NE(error_of("cuda:0").find("CUDA devices were requested"), std::string::npos);
  EXPECT_THROW(DeviceSet::cuda(), Error);
  unsetenv("TESSERA_DEVICES");
  auto d = DeviceSet::select();
  EXPECT_EQ(d.num_accelerators(), 0u);
  EXPECT_EQ(d.spec(), "(default)");
}

TEST(CudaSelection, EveryGpuOrTheOnesNamed) {
  std::string why;
  const int count = tessera_test::gpu_count(why);
  if (count == 0) GTEST_SKIP() << why;

  auto all = DeviceSet::select("cuda");
  ASSERT_EQ(all.num_accelerators(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Device& d = all.accelerator(static_cast<std::size_t>(i));
    EXPECT_EQ(d.kind(), DeviceKind::cuda);
    EXPECT_EQ(d.ordinal(), i);
    EXPECT_EQ(d.name(), "cuda:" + std::to_string(i));
    // The default pool takes most of the free memory.
    std::size_t free = 0, total = 0;
    CUDA_OK(cudaSetDevice(i));
    CUDA_OK(cudaMemGetInfo(&free, &total));
    EXPECT_GT(d.memory_capacity(), total / 2);
  }
  CUDA_OK(cudaSetDevice(0));
  Device& d0 = all.accelerator(0);
  ASSERT_EQ(d0.num_compute_streams(), 2u);
  EXPECT_EQ(d0.compute_stream(0).name(), "cuda:0/compute0");
  EXPECT_EQ(d0.compute_stream(1).name(), "cuda:0/compute1");
  EXPECT_EQ(d0.copy_stream(CopyDirection::host_to_device).name(), "cuda:0/h2d");
  EXPECT_EQ(d0.copy_stream(CopyDirection::device_to_host).name(), "cuda:0/d2h");
  EXPECT_EQ(d0.copy_stream(CopyDirection::device_to_device).name(), "cuda:0/d2d");
  EXPECT_NE(d0.compute_stream(0).native_handle(), nullptr);
  EXPECT_NE(d0.compute_stream(0).native_handle(), d0.compute_stream(1).native_handle());
  const std::string text = all.describe();
  EXPECT_NE(text.find("cuda:0: cuda, "), std::string::npos) << text;
  EXPECT_NE(text.find("compute capability"), std::string::npos) << text;
  EXPECT_NE(text.find("pinned host pool 256.0 MiB"), std::string::npos) << text;
  all = DeviceSet::select("host");  // frees the GPUs' pools for the next selections

  auto first = DeviceSet::select("cuda:0");
  ASSERT_EQ(first.num_accelerators(), 1u);
  EXPECT_EQ(first.accelerator(0).name(), "cuda:0");
  first = DeviceSet::select("host");

  unsetenv("TESSERA_DEVICES");
  auto by_default = DeviceSet::select();
  EXPECT_EQ(by_default.spec(), "(default)");
  EXPECT_EQ(by_default.num_accelerators(), static_cast<std::size_t>(count));
  by_default = DeviceSet::select("host");

  const std::string missing = error_of("cuda:0," + std::to_string(count));
  EXPECT_NE(missing.find("cuda:" + std::to_string(count) + " does not exist: this machine has " +
                         std::to_string(count) + " CUDA GPU(s)"),
            std::string::npos)
      << missing;
  EXPECT_NE(error_of("cuda:0,0").find("cuda:0 is listed twice"), std::string::npos);
}

TEST(CudaSelection, OptionsConfigureStreamsAndPools) {
  SKIP_WITHOUT_GPU();
  auto o = tessera_test::small_cuda_options();
  o.compute_streams = 3;
  auto set = DeviceSet::cuda(o);
  EXPECT_EQ(set.spec(), "cuda:0");
  Device& d = set.accelerator(0);
  EXPECT_EQ(d.num_compute_streams(), 3u);
  EXPECT_EQ(d.compute_stream(2).name(), "cuda:0/compute2");
  EXPECT_EQ(d.memory_capacity(), std::size_t{64} << 20);

  auto too_big = tessera_test::small_cuda_options();
  too_big.memory_bytes = std::size_t{1} << 50;
  try {
    DeviceSet::cuda(too_big);
    ADD_FAILURE() << "a 1 PiB pool was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device cuda:0: a device pool of"), std::string::npos) << e.what();
  }
  auto no_streams = tessera_test::small_cuda_options();
  no_streams.compute_streams = 0;
  EXPECT_THROW(DeviceSet::cuda(no_streams), Error);
}
