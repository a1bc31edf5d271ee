#pragma once
// Shared by the CUDA tests: whether a GPU is present (tests skip with the reason where not), a
// check for CUDA calls, and small device sets that leave the GPU's memory to other tests.

#include <tessera/device/device_set.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera_test {

/// How many GPUs the CUDA runtime sees; 0 with `why` set when none (or no driver).
inline int gpu_count(std::string& why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    return 0;
  }
  if (count == 0) why = "no CUDA device on this machine";
  return count;
}

inline bool have_gpu(std::string& why) { return gpu_count(why) > 0; }

/// GPUs `ordinals` with a 64 MiB device pool and an 8 MiB pinned pool each: quick to set up.
inline tessera::CudaOptions small_cuda_options(std::vector<int> ordinals = {0}) {
  tessera::CudaOptions o;
  o.ordinals = std::move(ordinals);
  o.memory_bytes = std::size_t{64} << 20;
  o.pinned_host_bytes = std::size_t{8} << 20;
  return o;
}

}  // namespace tessera_test

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

/// Skips the test, giving the reason, where no GPU is present.
#define SKIP_WITHOUT_GPU()                                                   \
  do {                                                                       \
    std::string skip_reason_;                                                \
    if (!tessera_test::have_gpu(skip_reason_)) GTEST_SKIP() << skip_reason_; \
  } while (false)
