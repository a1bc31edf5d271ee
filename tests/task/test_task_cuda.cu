// The portable kernel path on a real GPU: a kernel_task built in an nvcc-compiled file launches
// as a CUDA kernel with dynamic shared memory and __syncthreads() barriers. Skips without a GPU.
#include <tessera/task/runtime.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

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

TEST(TaskCuda, BlockSumRunsAsACudaKernel) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    GTEST_SKIP() << "no CUDA device on this machine";
  }
  CudaOptions o;
  o.ordinals = {0};
  o.memory_bytes = std::size_t{64} << 20;
  o.pinned_host_bytes = std::size_t{8} << 20;
  auto devices = DeviceSet::cuda(o);
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

}  // namespace
