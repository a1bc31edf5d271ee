// Captured graphs on a GPU (NodeGraph::capture): parts of device nodes recorded with a stream
// capture into a CUDA graph and replayed with cudaGraphLaunch give the same bits as running every
// node; a changed graph records again; recapture() updates the instantiated graph in place; a
// body that fails while recording fails the run naming it. Skips where no GPU is present.
#include "cuda_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/capture.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

__global__ void axpb(int n, float a, float b, float* x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

__global__ void add_into(int n, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

constexpr int n = 1 << 16;

cudaStream_t native(tessera::Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

void check_launch(const char* what) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw tessera::Error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Arrays {
  float* x = nullptr;
  float* y = nullptr;
  Arrays() {
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    std::vector<float> h(n);
    std::iota(h.begin(), h.end(), 0.0f);
    for (float& v : h) v = static_cast<float>(static_cast<int>(v) % 97) * 0.01f;
    cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~Arrays() {
    cudaFree(x);
    cudaFree(y);
  }
  std::vector<float> host_y() const {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
  }
};

// x on stream 0, y on stream 1 waiting for x (a device-side wait inside the recording), a host
// node reading y's first value each run, and a second device part after it.
std::vector<float> run(bool capture, std::size_t runs, std::vector<float>* seen = nullptr,
                       std::size_t* recordings = nullptr) {
  auto devices = tessera::DeviceSet::cuda(tessera_test::small_cuda_options());
  tessera::Device& gpu = devices.accelerator(0);
  tessera::ExecutorOptions options;
  options.num_devices = 1;
  tessera::Executor ex(options);
  Arrays a;
  std::vector<float> host_seen;
  float* first = nullptr;  // pinned: a copy into pageable memory cannot be recorded
  cudaMallocHost(&first, sizeof(float));
  tessera::Stream& s0 = gpu.compute_stream(0);
  tessera::Stream& s1 = gpu.compute_stream(gpu.num_compute_streams() > 1 ? 1 : 0);
  tessera::NodeGraph g("cuda-captured");
  auto& scale = g.emplace_on(s0, [&](tessera::Stream& s) {
                   axpb<<<n / 256, 256, 0, native(s)>>>(n, 0.5f, 1.0f, a.x);
                   check_launch("scale");
                 }).name("scale");
  auto& add = g.emplace_on(s1, [&](tessera::Stream& s) {
                 add_into<<<n / 256, 256, 0, native(s)>>>(n, a.x, a.y);
                 cudaMemcpyAsync(first, a.y, sizeof(float), cudaMemcpyDeviceToHost, native(s));
                 check_launch("add");
               }).name("add");
  auto& look = g.emplace([&] { host_seen.push_back(*first); }).name("look");
  auto& damp = g.emplace_on(s0, [&](tessera::Stream& s) {
                  axpb<<<n / 256, 256, 0, native(s)>>>(n, 0.25f, 0.0f, a.y);
                  check_launch("damp");
                }).name("damp");
  scale.precede(add);
  add.precede(look);
  look.precede(damp);
  g.capture(capture);
  ex.run_n(g, runs).get();
  if (seen) *seen = host_seen;
  if (recordings) *recordings = g.recordings();
  cudaFreeHost(first);
  return a.host_y();
}

}  // namespace

TEST(CudaCapture, ReplaysGiveTheSameBitsAsRunningEveryNode) {
  SKIP_WITHOUT_GPU();
  std::vector<float> seen_plain, seen_captured;
  std::size_t recordings = 0;
  const std::vector<float> plain = run(false, 20, &seen_plain);
  const std::vector<float> captured = run(true, 20, &seen_captured, &recordings);
  EXPECT_EQ(recordings, 2u);  // two parts, split by the host node, recorded once each
  ASSERT_EQ(seen_plain.size(), 20u);
  EXPECT_EQ(seen_plain, seen_captured);  // the host node ran between the parts every time
  for (int i = 0; i < n; ++i) ASSERT_EQ(plain[i], captured[i]) << "y[" << i << "]";
}

TEST(CudaCapture, ChangedGraphsRecordAgainAndRecaptureUpdatesArguments) {
  SKIP_WITHOUT_GPU();
  auto devices = tessera::DeviceSet::cuda(tessera_test::small_cuda_options());
  tessera::Device& gpu = devices.accelerator(0);
  tessera::ExecutorOptions options;
  options.num_devices = 1;
  tessera::Executor ex(options);
  Arrays a;
  CUDA_OK(cudaMemset(a.y, 0, n * sizeof(float)));
  float b = 1.0f;
  tessera::NodeGraph g("grows");
  g.capture();
  auto& inc = g.emplace_on(gpu.compute_stream(0), [&](tessera::Stream& s) {
                 axpb<<<n / 256, 256, 0, native(s)>>>(n, 1.0f, b, a.y);  // y += b, b as read when recorded
               }).name("inc");
  ex.run_n(g, 4).get();
  EXPECT_EQ(a.host_y()[7], 4.0f);
  b = 2.0f;
  g.recapture();  // same shape, new argument: cudaGraphExecUpdate
  ex.run_n(g, 3).get();
  EXPECT_EQ(a.host_y()[7], 10.0f);
  EXPECT_EQ(g.recordings(), 2u);
  // A new node: a stale replay would add 2 per run and never double.
  auto& twice = g.emplace_on(gpu.compute_stream(0), [&](tessera::Stream& s) {
                   axpb<<<n / 256, 256, 0, native(s)>>>(n, 2.0f, 0.0f, a.y);
                 }).name("twice");
  inc.precede(twice);
  ex.run_n(g, 3).get();  // ((10+2)*2+2)*2 = 52, (52+2)*2 = 108
  EXPECT_EQ(a.host_y()[7], 108.0f);
  EXPECT_EQ(g.recordings(), 3u);
}

TEST(CudaCapture, ABodyThatFailsWhileRecordingFailsTheRunNamingIt) {
  SKIP_WITHOUT_GPU();
  auto devices = tessera::DeviceSet::cuda(tessera_test::small_cuda_options());
  tessera::Device& gpu = devices.accelerator(0);
  tessera::ExecutorOptions options;
  options.num_devices = 1;
  tessera::Executor ex(options);
  Arrays a;
  int bodies = 0;
  tessera::NodeGraph g("bad-launch");
  g.capture();
  g.emplace_on(gpu.compute_stream(0), [&](tessera::Stream& s) {
     // The second body (the recording) asks for more threads per block than a GPU has.
     const int threads = ++bodies == 2 ? 4096 : 256;
     axpb<<<n / threads, threads, 0, native(s)>>>(n, 1.0f, 1.0f, a.y);
     check_launch("too many threads");
   }).name("oversized");
  try {
    ex.run_n(g, 3).get();
    FAIL() << "the failed recording did not reach the future";
  } catch (const tessera::NodeError& e) {
    EXPECT_EQ(e.node_name(), "oversized");
    EXPECT_NE(std::string(e.what()).find("too many threads"), std::string::npos) << e.what();
  }
  // The capture was dropped cleanly: the stream runs work again, and the next run records.
  ex.run_n(g, 2).get();
  EXPECT_EQ(g.recordings(), 1u);
  CUDA_OK(cudaDeviceSynchronize());
}

// The building block without an executor: a capture across two streams launched three times.
TEST(CudaCapture, AStreamCaptureAcrossStreamsLaunchesWhole) {
  SKIP_WITHOUT_GPU();
  auto devices = tessera::DeviceSet::cuda(tessera_test::small_cuda_options());
  tessera::Device& gpu = devices.accelerator(0);
  gpu.make_current();
  Arrays a;
  CUDA_OK(cudaMemset(a.x, 0, n * sizeof(float)));
  CUDA_OK(cudaMemset(a.y, 0, n * sizeof(float)));
  tessera::Stream& s0 = gpu.compute_stream(0);
  tessera::Stream& s1 = gpu.compute_stream(gpu.num_compute_streams() > 1 ? 1 : 0);
  tessera::Stream* others[] = {&s1};
  auto capture = s0.begin_capture(others);
  axpb<<<n / 256, 256, 0, native(s0)>>>(n, 1.0f, 1.0f, a.x);  // x += 1
  tessera::Event e = s0.record();
  s1.wait(e);
  add_into<<<n / 256, 256, 0, native(s1)>>>(n, a.x, a.y);  // y += x
  auto work = capture->finish(nullptr);
  for (int i = 0; i < 3; ++i) work->launch();
  s0.synchronize();
  EXPECT_EQ(a.host_y()[5], 1.0f + 2.0f + 3.0f);
}

// nvcc takes no generic extended lambdas: the kernels of the graph test as functors.
struct Sweep {
  template <class In, class Out>
  TESSERA_HOST_DEVICE void operator()(In in, Out out) const {
    *out = 0.2 * (*in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1)) + 0.1 * *in;
  }
};
struct CopyBack {
  template <class From, class To>
  TESSERA_HOST_DEVICE void operator()(From from, To to) const {
    *to = *from;
  }
};

// A Graph over tensors on the GPU: a padded stencil, a copy back and a sum, 10 runs captured and
// plain, every bit equal. Blocks cut along y exchange whole rows on the device each run, so the
// recording is replayed; blocks cut along x stage their halos through the host, whose rows the
// memory layer copies in each run, so that recording is not replayed and the graph says why.
TEST(CudaCapture, AGraphOverTensorsReplaysBitForBit) {
  SKIP_WITHOUT_GPU();
  using namespace tessera;
  const std::size_t nx = 96, ny = 64;
  for (const Extent<2> partitions : {Extent<2>{1, 4}, Extent<2>{2, 2}}) {
    auto solve = [&](bool capture, std::vector<double>& sums, std::string& refusal, std::size_t& recordings) {
      DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
      MemoryManager memory(devices);
      ExecutorOptions options;
      options.num_devices = 1;
      Executor ex(options);
      TensorOptions<2> o;
      o.partitions = partitions;
      o.with_padding(1);
      Tensor<double, 2> u(memory, Extent<2>{nx, ny}, o.named("u"));
      Tensor<double, 2> v(memory, Extent<2>{nx, ny}, o.named("v"));
      std::vector<double> dense(nx * ny);
      for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<double>(k % 89) * 0.125;
      u.fill_from(dense.data());
      ReductionResult<double> sum;
      Graph g("gpu sweep");
      g.split(Sweep{}, concurrent_padded_access(u), v)
          .then_split(CopyBack{}, v, u)
          .then_reduce(u, sum, Sum{})
          .then([&] { sums.push_back(sum.value()); });
      g.capture(capture);
      g.run_n(ex, 10).get();
      refusal = g.pass(0).capture_refusal();
      recordings = g.pass(0).recordings();
      std::vector<double> got(nx * ny);
      u.gather_to(got.data());
      return got;
    };
    std::vector<double> plain_sums, captured_sums;
    std::string refusal;
    std::size_t recordings = 0;
    const std::vector<double> plain = solve(false, plain_sums, refusal, recordings);
    const std::vector<double> captured = solve(true, captured_sums, refusal, recordings);
    const bool along_y = partitions.sizes[0] == 1;
    ASSERT_EQ(captured_sums.size(), 10u);
    EXPECT_EQ(plain_sums, captured_sums);
    for (std::size_t k = 0; k < plain.size(); ++k) ASSERT_EQ(plain[k], captured[k]) << "site " << k;
    std::printf("graph over %zux%zu blocks on the GPU: %zu recording(s)%s%s\n", partitions.sizes[0],
                partitions.sizes[1], recordings, refusal.empty() ? ", replayed" : ", not replayed: ", refusal.c_str());
    if (along_y) {
      EXPECT_EQ(refusal, "");
      EXPECT_GT(recordings, 0u);
    } else {
      EXPECT_NE(refusal.find("copied in"), std::string::npos) << refusal;
    }
  }
}
