// Device selection: the defaults, every TESSERA_DEVICES form, and the errors.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <future>

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

TEST(DeviceSelection, DefaultIsEveryGpuElseTheHostAlone) {
  unsetenv("TESSERA_DEVICES");
  auto d = DeviceSet::select();
  EXPECT_EQ(d.host().kind(), DeviceKind::host);
  EXPECT_EQ(d.spec(), "(default)");
  if (!DeviceSet::has_cuda_backend()) {
    EXPECT_EQ(d.num_accelerators(), 0u);
  }
  // With the CUDA backend: every GPU found (none on a machine without one).
  for (std::size_t i = 0; i < d.num_accelerators(); ++i) {
    EXPECT_EQ(d.accelerator(i).kind(), DeviceKind::cuda);
  }
}

TEST(DeviceSelection, HostAndSimForms) {
  EXPECT_EQ(DeviceSet::select("host").num_accelerators(), 0u);
  auto four = DeviceSet::select("sim:4");
  ASSERT_EQ(four.num_accelerators(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(four.accelerator(i).kind(), DeviceKind::sim);
    EXPECT_EQ(four.accelerator(i).name(), "sim:" + std::to_string(i));
    EXPECT_EQ(four.accelerator(i).memory_capacity(), std::size_t{1} << 30);
  }
  auto small = DeviceSet::select("sim:2:256MiB");
  ASSERT_EQ(small.num_accelerators(), 2u);
  EXPECT_EQ(small.accelerator(1).memory_capacity(), std::size_t{256} << 20);
  EXPECT_NE(small.describe().find("sim:1: sim, 256.0 MiB"), std::string::npos) << small.describe();
}

TEST(DeviceSelection, EnvironmentVariableIsRead) {
  setenv("TESSERA_DEVICES", "sim:3:64MiB", 1);
  auto d = DeviceSet::select();
  EXPECT_EQ(d.num_accelerators(), 3u);
  EXPECT_EQ(d.spec(), "sim:3:64MiB");
  // An explicit argument wins over the environment.
  EXPECT_EQ(DeviceSet::select("sim:1").num_accelerators(), 1u);
  unsetenv("TESSERA_DEVICES");
}

TEST(DeviceSelection, MalformedAndMissingDevicesAreClearErrors) {
  EXPECT_NE(error_of("gpu:1").find("unknown device kind 'gpu'"), std::string::npos);
  EXPECT_NE(error_of("sim").find("'sim' needs a device count"), std::string::npos);
  EXPECT_NE(error_of("sim:x").find("the device count 'x' is not a number"), std::string::npos);
  EXPECT_NE(error_of("sim:0").find("between 1 and 64, not 0"), std::string::npos);
  EXPECT_NE(error_of("sim:2:lots").find("device selection 'sim:2:lots'"), std::string::npos);
  // Blamed on the variable only when the text came from it.
  unsetenv("TESSERA_DEVICES");
  EXPECT_EQ(error_of("sim4").find("TESSERA_DEVICES"), std::string::npos) << error_of("sim4");
  setenv("TESSERA_DEVICES", "sim4", 1);
  EXPECT_NE(error_of("").find("TESSERA_DEVICES='sim4': unknown device kind 'sim4'"), std::string::npos);
  unsetenv("TESSERA_DEVICES");
  // A size whose round-up to whole pages overflows is refused, not mapped short.
  EXPECT_NE(error_of("sim:1:18446744073709551615").find("cannot reserve"), std::string::npos);
  EXPECT_NE(error_of("sim:2:1KiB").find("at least 1MiB"), std::string::npos);
  EXPECT_NE(error_of("host:2").find("'host' takes no arguments"), std::string::npos);
  if (!DeviceSet::has_cuda_backend()) {
    // Asking a build without the CUDA backend for CUDA is an error, never a silent fallback
    // (tests/cuda covers the backend's own selection).
    EXPECT_NE(error_of("cuda").find("CUDA devices were requested"), std::string::npos);
    EXPECT_NE(error_of("cuda:0,1").find("CUDA devices were requested"), std::string::npos);
    EXPECT_THROW(DeviceSet::cuda(), Error);
  }
  auto set = DeviceSet::select("sim:1");
  EXPECT_THROW(set.accelerator(1), Error);
  EXPECT_THROW(set.accelerator(0).compute_stream(7), Error);
}

TEST(DeviceSelection, SimComputeSpeedsAreParsedAndChecked) {
  EXPECT_EQ(DeviceSet::select("sim:2:speed=1,4").num_accelerators(), 2u);
  EXPECT_EQ(DeviceSet::select("sim:3:64MiB:speed=2").num_accelerators(), 3u);
  EXPECT_NE(error_of("sim:2:speed=0").find("a compute speed must be a number above 0, not '0'"), std::string::npos);
  EXPECT_NE(error_of("sim:2:speed=fast").find("not 'fast'"), std::string::npos);
  EXPECT_NE(error_of("sim:2:speed=1,2,3").find("one per device (2), not 3"), std::string::npos);
  EXPECT_NE(error_of("sim:2:speed=1,").find("not ''"), std::string::npos);
  EXPECT_NE(error_of("sim:2:speed=2:64MiB").find("the size comes right after the count"), std::string::npos);
  EXPECT_NE(error_of("sim:2:speed=1:speed=2").find("give speed= once"), std::string::npos);
  SimOptions options;
  options.memory_bytes = std::size_t{16} << 20;
  options.compute_speeds = {1, 2, 3};
  EXPECT_THROW(DeviceSet::simulated(2, options), Error);
  options.compute_speeds = {-1};
  EXPECT_THROW(DeviceSet::simulated(2, options), Error);
}

// The model's promise is a lower bound: a device of speed s takes at least fastest/s times the
// CPU time the work took (the host may always be slower still, so no upper bound here).
TEST(DeviceSelection, SlowerSimDeviceHoldsWorkBackByItsSpeedRatio) {
  auto devices = DeviceSet::select("sim:2:16MiB:speed=1,4");
  // Spins for `d` of the stream thread's CPU time: what the model scales.
  auto spin = [](std::chrono::milliseconds d) {
    auto cpu = [] {
      timespec t{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
    };
    const auto until = cpu() + d;
    while (cpu() < until) {
    }
  };
  auto time_on = [&](std::size_t device) {
    Stream& s = devices.accelerator(device).compute_stream(0);
    std::promise<void> done;
    const auto begin = std::chrono::steady_clock::now();
    s.enqueue_host([&] { spin(std::chrono::milliseconds(5)); }, "spin");
    s.then([&] { done.set_value(); });
    done.get_future().wait();
    return std::chrono::steady_clock::now() - begin;
  };
  EXPECT_GE(time_on(0), std::chrono::milliseconds(20));  // speed 1 of 4: four times the 5 ms
  EXPECT_GE(time_on(1), std::chrono::milliseconds(5));
}
