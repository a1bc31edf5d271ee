// CUDA streams and events: a stream waits on another's event on the device, events turn ready
// when the GPU gets there, then() and host work run after the kernels before them, a throwing
// callback does not stop the stream, and a CUDA stream can wait on a simulated device's event.
#include "cuda_test_support.hpp"

#include <tessera/device/device_set.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace tessera;
using namespace std::chrono_literals;

namespace {

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Writes `value` everywhere after spinning `delay_ns`, so a copy not ordered after it would see
// the old contents.
__global__ void fill_after(int* out, int n, int value, unsigned long long delay_ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < delay_ns) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

cudaStream_t cuda(Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

constexpr int n = 1 << 16;
constexpr std::size_t bytes = n * sizeof(int);
constexpr unsigned long long slow_ns = 300'000'000;  // far longer than any enqueue call takes

}  // namespace

TEST(CudaStreams, WaitOnAnotherStreamsEventOrdersOnTheDevice) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  Stream& a = d.compute_stream(0);
  Stream& b = d.compute_stream(1);
  d.make_current();
  int current = -1;
  CUDA_OK(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);
  auto* data = static_cast<int*>(d.allocate(bytes));
  std::vector<int> result(n, -1);
  CUDA_OK(cudaMemsetAsync(data, 0, bytes, cuda(a)));
  a.synchronize();

  fill_after<<<n / 256, 256, 0, cuda(a)>>>(data, n, 7, slow_ns);
  CUDA_OK(cudaGetLastError());
  Event written = a.record();
  const auto before = std::chrono::steady_clock::now();
  b.wait(written);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 150ms) << "wait() blocked the host";
  d.copy_async(result.data(), data, bytes, CopyDirection::device_to_host, b);
  b.synchronize();
  EXPECT_EQ(std::count(result.begin(), result.end(), 7), n);
  d.deallocate(data, bytes);
}

TEST(CudaStreams, EventReadyAndSynchronizeFollowTheGpu) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  Stream& s = d.compute_stream(0);
  auto* data = static_cast<int*>(d.allocate(bytes));
  fill_after<<<n / 256, 256, 0, cuda(s)>>>(data, n, 1, slow_ns);
  CUDA_OK(cudaGetLastError());
  Event e = s.record();
  EXPECT_FALSE(e.ready());
  e.synchronize();
  EXPECT_TRUE(e.ready());
  // The GPU really is past the kernel: its writes are all there.
  std::vector<int> result(n, 0);
  CUDA_OK(cudaMemcpy(result.data(), data, bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::count(result.begin(), result.end(), 1), n);
  EXPECT_TRUE(Event().ready());
  d.compute_stream(1).wait(e);  // ready already: nothing to enqueue
  d.synchronize();
  d.deallocate(data, bytes);
}

TEST(CudaStreams, ThenRunsAfterTheKernelAndTheCopy) {
  SKIP_WITHOUT_GPU();
  auto set = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& d = set.accelerator(0);
  Stream& s = d.compute_stream(0);
  auto* data = static_cast<int*>(d.allocate(bytes));
  auto* staged = static_cast<int*>(d.try_allocate_pinned_host(bytes));
  ASSERT_NE(staged, nullptr);
  std::fill(staged, staged + n, 0);
  fill_after<<<n / 256, 256, 0, cuda(s)>>>(data, n, 42, slow_ns / 3);
  CUDA_OK(cudaGetLastError());
  d.copy_async(staged, data, bytes, CopyDirection::device_to_host, s);
  std::promise<long> seen;
  s.then([&] { seen.set_value(std::count(staged, staged + n, 42)); });
  auto f = seen.get_future();
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(f.get(), n);

  // A throwing piece of host work is logged and dropped; the stream goes on.
  std::atomic<int> order{0};
  int first = -1, after = -1;
  s.enqueue_host([&] { first = order++; }, "first");
  s.enqueue_host([] { throw std::runtime_error("host work failed on purpose"); }, "thrower");
  s.then([&] { after = order++; });
  s.synchronize();
  EXPECT_EQ(first, 0);
  EXPECT_EQ(after, 1);
  d.deallocate(data, bytes);
  d.deallocate_pinned_host(staged, bytes);
}

TEST(CudaStreams, WaitsOnAnEventOfASimulatedDevice) {
  SKIP_WITHOUT_GPU();
  auto gpus = DeviceSet::cuda(tessera_test::small_cuda_options());
  SimOptions small;
  small.memory_bytes = std::size_t{1} << 20;
  auto sims = DeviceSet::simulated(1, small);
  Stream& sim = sims.accelerator(0).compute_stream(0);
  Stream& gpu = gpus.accelerator(0).compute_stream(0);
  std::atomic<bool> sim_done{false};
  bool seen_in_order = false;
  sim.enqueue_host([&] {
    std::this_thread::sleep_for(100ms);
    sim_done = true;
  });
  gpu.wait(sim.record());
  gpu.enqueue_host([&] { seen_in_order = sim_done.load(); });
  gpu.synchronize();
  EXPECT_TRUE(seen_in_order);
}
