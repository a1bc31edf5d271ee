// The catalog on a real GPU: kernels built in this nvcc-compiled file run as CUDA grids, products
// go to cuBLAS, and results match the host's (bitwise where the arithmetic is the same: maps,
// deterministic reductions, Random's uniforms). Skips without a GPU.
#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace flow = tessera::flow;

namespace {

bool have_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  (void)cudaGetLastError();
  return false;
}

tessera::DeviceSet gpu() {
  tessera::CudaOptions o;
  o.ordinals = {0};
  o.memory_bytes = std::size_t{256} << 20;
  o.pinned_host_bytes = std::size_t{16} << 20;
  return tessera::DeviceSet::cuda(o);
}

std::vector<double> values(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.001 * static_cast<double>(i)) * 10 - 3;
  return v;
}

struct Square {
  TESSERA_HOST_DEVICE double operator()(double v) const { return v * v; }
};
struct Plus {
  TESSERA_HOST_DEVICE double operator()(double a, double b) const { return a + b; }
};
struct Relu {
  TESSERA_HOST_DEVICE double operator()(double v) const { return v > 0 ? v : 0.0; }
};

// Runs square -> sum and a product with a relu epilogue on `devices`; returns the results.
struct Results {
  std::vector<double> squares;
  double sum = 0;
  std::vector<double> product;
  std::vector<double> uniforms;
  flow::FlowStats stats;
};

Results run(tessera::DeviceSet& devices, bool fusion) {
  flow::FlowOptions o;
  o.fusion = fusion;
  flow::Flow f(devices, o);
  Results r;
  auto& sq = f.add<flow::Map<double, 1, Square>>("square", Square{});
  auto& sum = f.add<flow::Reduce<double, 1, Plus>>("sum", 0.0, Plus{});
  auto& sq2 = f.add<flow::Map<double, 1, Square>>("square again", Square{});
  flow::connect(sq2.output, sum.input);
  f.on_receive(sq.output, [&](const flow::Vector<double>& v) { r.squares = v.to_vector(); });
  f.on_receive(sum.output, [&](const flow::Scalar<double>& s) { r.sum = s.value(); });
  // The whole graph first: ports connect only while nothing is in flight, and a GPU's firings
  // are still running when the host has sent.
  auto& p = f.add<flow::MatrixProduct<double>>();
  auto& relu = f.add<flow::Map<double, 2, Relu>>("relu", Relu{});
  flow::connect(p.output, relu.input);
  f.on_receive(relu.output, [&](const flow::Matrix<double>& m) { r.product = m.to_vector(); });
  auto& rnd = f.add<flow::Random<double>>("uniform", 100000, 7, flow::Distribution::uniform);
  f.on_receive(rnd.output, [&](const flow::Vector<double>& v) { r.uniforms = v.to_vector(); });
  const auto x = values(300001);
  flow::Vector<double> ax(f, x);
  f.send(sq.input, ax);
  f.send(sq2.input, ax);
  const auto set = f.new_input_set();
  f.send(p.left, flow::Matrix<double>(f, {300, 200}, values(60000)), set);
  f.send(p.right, flow::Matrix<double>(f, {200, 100}, values(20000)), set);
  f.send(rnd.request, std::uint64_t{3});
  f.wait();
  r.stats = f.stats();
  return r;
}

}  // namespace

TEST(FlowCuda, CatalogMatchesTheHost) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine";
  auto devices = gpu();
  auto host = tessera::DeviceSet::select("host");
  for (const bool fusion : {false, true}) {
    const Results g = run(devices, fusion), h = run(host, fusion);
    EXPECT_EQ(g.stats.firings_per_space.at(1), g.stats.firings) << "every firing on the GPU";
    EXPECT_EQ(g.squares, h.squares);
    EXPECT_EQ(g.sum, h.sum) << "the fold's cut depends on the length only";
    EXPECT_EQ(g.uniforms, h.uniforms);
    ASSERT_EQ(g.product.size(), h.product.size());
    for (std::size_t i = 0; i < g.product.size(); ++i) EXPECT_NEAR(g.product[i], h.product[i], 1e-9);
  }
}
