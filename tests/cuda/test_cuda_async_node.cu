// A GPU-kind node that launches a real kernel on a CUDA stream and completes through the
// stream (cudaLaunchHostFunc), so no worker waits for the GPU; its CPU successor sees the
// kernel's result. Skips where no GPU is present.
#include "cuda_test_support.hpp"

#include <tessera/core/host_device.hpp>
#include <tessera/sched/executor.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void on_stream_done(void* token) { static_cast<tessera::AsyncDone*>(token)->complete(); }

}  // namespace

TEST(CudaAsyncNode, KernelNodeCompletesThroughTheStream) {
  SKIP_WITHOUT_GPU();

  const int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 31);
    y[i] = static_cast<float>(i % 7);
  }
  float *dx = nullptr, *dy = nullptr;
  CUDA_OK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_OK(cudaMalloc(&dy, n * sizeof(float)));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  tessera::ExecutorOptions opt;
  opt.num_devices = 1;
  tessera::Executor ex(opt);
  tessera::NodeGraph g("cuda-saxpy");
  tessera::AsyncDone* pending = nullptr;
  std::vector<float> result(n);
  auto& upload = g.emplace([&] {
    cudaMemcpyAsync(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream);
  }).name("upload");
  auto& kernel = g.emplace_async([&](tessera::AsyncDone done) {
                    saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 3.0f, dx, dy);
                    cudaMemcpyAsync(result.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
                    pending = new tessera::AsyncDone(done);
                    cudaLaunchHostFunc(stream, on_stream_done, pending);
                  })
                     .name("saxpy")
                     .kind(tessera::ExecKind::gpu);
  int wrong = -1;
  auto& check = g.emplace([&] {
    wrong = 0;
    for (int i = 0; i < n; ++i)
      if (result[i] != 3.0f * x[i] + y[i]) ++wrong;
  }).name("check");
  upload.precede(kernel);
  kernel.precede(check);
  ex.run(g).get();
  delete pending;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dy);
}
