// CUDA device memory: the device pool hands out real GPU memory and refuses what does not fit,
// the pinned host pool is page-locked, and copies in every direction (and between two GPUs)
// move the bytes.
#include "cuda_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

using namespace tessera;

TEST(CudaDeviceMemory, PoolHandsOutGpuMemoryAndRefusesOversizedRequests) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  void* p = d.allocate(std::size_t{1} << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  cudaPointerAttributes a{};
  CUDA_OK(cudaPointerGetAttributes(&a, p));
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 0);
  EXPECT_GE(d.bytes_in_use(), std::size_t{1} << 20);

  const std::size_t too_much = d.memory_capacity() + 1;
  EXPECT_EQ(d.try_allocate(too_much), nullptr);
  try {
    d.allocate(too_much);
    ADD_FAILURE() << "a request above the capacity was served";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
  d.deallocate(p, std::size_t{1} << 20);
  EXPECT_EQ(d.bytes_in_use(), 0u);
}

TEST(CudaDeviceMemory, PinnedHostPoolIsPageLockedAndBounded) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  auto* p = static_cast<int*>(d.try_allocate_pinned_host(std::size_t{1} << 20));
  ASSERT_NE(p, nullptr);
  cudaPointerAttributes a{};
  CUDA_OK(cudaPointerGetAttributes(&a, p));
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
  p[0] = 17;  // ordinary host memory to the CPU
  EXPECT_EQ(p[0], 17);
  EXPECT_EQ(d.try_allocate_pinned_host(std::size_t{9} << 20), nullptr);  // the pool has 8 MiB
  d.deallocate_pinned_host(p, std::size_t{1} << 20);

  auto none = tessera_test::small_cuda_options();
  none.pinned_host_bytes = 0;
  auto without = DeviceSet::cuda(none);
  EXPECT_EQ(without.accelerator(0).try_allocate_pinned_host(64), nullptr);
}

TEST(CudaDeviceMemory, CopiesMoveRealBytesInEveryDirection) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  constexpr std::size_t n = 1 << 18;
  constexpr std::size_t bytes = n * sizeof(int);
  auto* in = static_cast<int*>(d.try_allocate_pinned_host(bytes));
  auto* out = static_cast<int*>(d.try_allocate_pinned_host(bytes));
  ASSERT_TRUE(in != nullptr && out != nullptr);
  std::iota(in, in + n, 1000);
  std::fill(out, out + n, 0);
  void* a = d.allocate(bytes);
  void* b = d.allocate(bytes);

  Stream& h2d = d.copy_stream(CopyDirection::host_to_device);
  Stream& d2d = d.copy_stream(CopyDirection::device_to_device);
  Stream& d2h = d.copy_stream(CopyDirection::device_to_host);
  d.copy_async(a, in, bytes, CopyDirection::host_to_device, h2d);
  d2d.wait(h2d.record());
  d.copy_async(b, a, bytes, CopyDirection::device_to_device, d2d);
  d2h.wait(d2d.record());
  d.copy_async(out, b, bytes, CopyDirection::device_to_host, d2h);
  d2h.synchronize();
  EXPECT_TRUE(std::equal(in, in + n, out));

  // Pageable host memory works too, at lower speed.
  std::vector<int> pageable(n, -1);
  d.copy_async(pageable.data(), b, bytes, CopyDirection::device_to_host, d2h);
  d2h.synchronize();
  EXPECT_TRUE(std::equal(in, in + n, pageable.begin()));

  EXPECT_THROW(d.copy_async(out, in, bytes, CopyDirection::host_to_device, h2d), Error);  // nothing on the device
  EXPECT_THROW(d.copy_async(a, in, bytes, CopyDirection::device_to_host, d2h), Error);    // backwards
  d.deallocate(a, bytes);
  d.deallocate(b, bytes);
  d.deallocate_pinned_host(in, bytes);
  d.deallocate_pinned_host(out, bytes);
}

// From pageable memory the copy goes through the pinned pool: the source is reusable once the
// call returns. A pinned source, an empty copy, and a copy larger than the pool are left to
// copy_async (false); a backwards copy is an error.
TEST(CudaDeviceMemory, StagedCopyFromPageableMemoryFreesTheSourceAtOnce) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());  // 8 MiB pinned pool
  Device& d = set.accelerator(0);
  Stream& h2d = d.copy_stream(CopyDirection::host_to_device);
  Stream& d2h = d.copy_stream(CopyDirection::device_to_host);
  constexpr std::size_t n = (3 << 20) / sizeof(int);  // three staging pieces
  constexpr std::size_t bytes = n * sizeof(int);
  void* a = d.allocate(bytes);
  for (int round = 0; round < 4; ++round) {  // the blocks come back to the pool between rounds
    std::vector<int> in(n);
    std::iota(in.begin(), in.end(), round * 1000);
    ASSERT_TRUE(d.copy_to_device_staged(a, in.data(), bytes, h2d)) << "round " << round;
    std::fill(in.begin(), in.end(), -1);
    d2h.wait(h2d.record());
    std::vector<int> out(n, 0);
    d.copy_async(out.data(), a, bytes, CopyDirection::device_to_host, d2h);
    d2h.synchronize();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<int>(round * 1000 + i)) << "element " << i;
  }
  auto* pinned = static_cast<int*>(d.try_allocate_pinned_host(1024));
  ASSERT_NE(pinned, nullptr);
  EXPECT_FALSE(d.copy_to_device_staged(a, pinned, 1024, h2d));
  d.deallocate_pinned_host(pinned, 1024);
  std::vector<char> big(9 << 20);
  void* b = d.allocate(big.size());
  EXPECT_FALSE(d.copy_to_device_staged(b, big.data(), big.size(), h2d));  // over the 8 MiB pool
  EXPECT_FALSE(d.copy_to_device_staged(a, big.data(), 0, h2d));
  EXPECT_THROW(d.copy_to_device_staged(big.data(), a, 64, h2d), Error);
  h2d.synchronize();
  d.deallocate(a, bytes);
  d.deallocate(b, big.size());
}

TEST(CudaDeviceMemory, PeerCopyBetweenTwoGpus) {
  std::string why;
  const int count = tessera_test::gpu_count(why);
  if (count < 2) GTEST_SKIP() << (count == 0 ? why : "one GPU: a peer copy needs two");
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options({0, 1}));
  Device& g0 = set.accelerator(0);
  Device& g1 = set.accelerator(1);
  int can = 0;
  CUDA_OK(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (can != 0) {
    EXPECT_NE(set.describe().find("peer access to cuda:1"), std::string::npos) << set.describe();
  }

  constexpr std::size_t n = 1 << 16;
  constexpr std::size_t bytes = n * sizeof(int);
  std::vector<int> in(n), back(n, 0);
  std::iota(in.begin(), in.end(), -500);
  void* on0 = g0.allocate(bytes);
  void* on1 = g1.allocate(bytes);
  void* again0 = g0.allocate(bytes);
  g0.copy_async(on0, in.data(), bytes, CopyDirection::host_to_device, g0.copy_stream(CopyDirection::host_to_device));
  Stream& s0 = g0.copy_stream(CopyDirection::device_to_device);
  Stream& s1 = g1.copy_stream(CopyDirection::device_to_device);
  s0.wait(g0.copy_stream(CopyDirection::host_to_device).record());
  g0.copy_async(on1, on0, bytes, CopyDirection::device_to_device, s0);     // pushed by the source GPU
  s1.wait(s0.record());                                                    // a GPU waits on another's event
  g1.copy_async(again0, on1, bytes, CopyDirection::device_to_device, s1);  // pulled back by the other
  Stream& d2h = g0.copy_stream(CopyDirection::device_to_host);
  d2h.wait(s1.record());
  g0.copy_async(back.data(), again0, bytes, CopyDirection::device_to_host, d2h);
  d2h.synchronize();
  EXPECT_EQ(in, back);
  // The backend switched devices for its own calls only: the thread's choice stands.
  g1.make_current();
  g0.copy_async(on0, in.data(), bytes, CopyDirection::host_to_device, g0.copy_stream(CopyDirection::host_to_device));
  int current = -1;
  CUDA_OK(cudaGetDevice(&current));
  EXPECT_EQ(current, 1);
  g0.make_current();
  g0.synchronize();
  g0.deallocate(on0, bytes);
  g0.deallocate(again0, bytes);
  g1.deallocate(on1, bytes);
}
