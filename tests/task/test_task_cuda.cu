// The portable kernel path on a real GPU: a kernel_task built in an nvcc-compiled file launches
// as a CUDA kernel with dynamic shared memory and __syncthreads() barriers; copy_from straight to
// the GPU, from pageable and from pinned memory. Skips without a GPU.
#include <tessera/task/runtime.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

using namespace tessera;

namespace {

struct BlockSum {
  TESSERA_HOST_DEVICE void operator()(const Group& g, const double* x, double* sums) const {
    double* s = g.shared<double>();
    g.items([&](const Item& it) { s[it.local.x] = x[it.global.x]; });
    for (std::size_t half = g.size().x / 2; half > 0; half /= 2)
      g.items([&](const Item& it) {
        if (it.local.x < half) s[it.local.x] += s[it.local.x + half];
      });
    g.items([&](const Item& it) {
      if (it.local.x == 0) sums[g.id().x] = s[0];
    });
  }
};

bool have_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  (void)cudaGetLastError();
  return false;
}

CudaOptions small_gpu() {
  CudaOptions o;
  o.ordinals = {0};
  o.memory_bytes = std::size_t{64} << 20;
  o.pinned_host_bytes = std::size_t{8} << 20;
  return o;
}

struct AddOne {
  TESSERA_HOST_DEVICE void operator()(const Group& g, int* x) const {
    g.items([&](const Item& it) { x[it.global.x] += 1; });
  }
};

TEST(TaskCuda, BlockSumRunsAsACudaKernel) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine";
  auto devices = DeviceSet::cuda(small_gpu());
  TaskRuntime rt(devices);
  constexpr std::size_t groups = 64, items = 128, n = groups * items;
  HeteroObject<double> x(rt, n, "x"), sums(rt, groups, "sums");
  double* h = x.request(Access::write).get();
  std::iota(h, h + n, 0.0);
  x.release();
  Task t = kernel_task("block-sum", TaskKind::gpu, Grid{{groups}, {items}}, BlockSum{}, tessera::read(x), tessera::write(sums));
  t.shared_bytes(items * sizeof(double));
  auto handle = rt.submit(t);
  handle.get();
  EXPECT_EQ(handle.device().kind(), DeviceKind::cuda);
  std::vector<double> out(groups);
  sums.copy_to(out.data()).get();
  for (std::size_t b = 0; b < groups; ++b)
    ASSERT_EQ(out[b], static_cast<double>(items * (b * items) + items * (items - 1) / 2)) << "group " << b;
}

// A pageable source is staged, so it may be freed as soon as the handle is done; a pinned one
// (from cudaMallocHost) is copied as it is. Both reach the kernel that follows.
TEST(TaskCuda, CopyFromReachesTheKernelFromPageableAndPinnedMemory) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine";
  auto devices = DeviceSet::cuda(small_gpu());
  TaskRuntime rt(devices);
  constexpr std::size_t groups = 512, items = 256, n = groups * items;  // 512 KiB
  for (bool pinned : {false, true}) {
    HeteroObject<int> x(rt, n, "x");
    int* in = nullptr;
    std::unique_ptr<std::vector<int>> pageable;
    if (pinned) {
      ASSERT_EQ(cudaMallocHost(&in, n * sizeof(int)), cudaSuccess);
    } else {
      pageable = std::make_unique<std::vector<int>>(n);
      in = pageable->data();
    }
    std::iota(in, in + n, 3);
    TaskHandle copied = x.copy_from(in, TaskKind::gpu);
    copied.get();
    EXPECT_EQ(copied.device().kind(), DeviceKind::cuda);
    if (pinned) {
      ASSERT_EQ(cudaFreeHost(in), cudaSuccess);
    } else {
      std::fill(pageable->begin(), pageable->end(), -1);
      pageable.reset();
    }
    rt.submit(kernel_task("add-one", TaskKind::gpu, Grid{{groups}, {items}}, AddOne{}, tessera::read_write(x))).get();
    std::vector<int> out(n);
    x.copy_to(out.data()).get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<int>(i + 4)) << "element " << i << (pinned ? " (pinned)" : "");
    EXPECT_EQ(rt.memory().stats().transferred.host_to_device, 0u) << "copy_from went through the host copy";
  }
}

}  // namespace
