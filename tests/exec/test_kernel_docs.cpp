// The examples of docs/kernels.md, compiled and checked here word for word.

#include <gtest/gtest.h>

// The one include docs/kernels.md names, alone, so the page's examples compile as shown.
#include <tessera/tessera.hpp>

#include <vector>

using namespace tessera;

namespace {

TEST(KernelDocs, SaxpyAndADifferenceStencilAndAReduction) {
  // DOC kernels-setup begin
  DeviceSet devices = DeviceSet::select("sim:2");  // or "host", "cuda", TESSERA_DEVICES
  MemoryManager memory(devices);
  Executor ex;
  TensorOptions<2> options;
  options.partitions = {1, 2};  // one partition per device, split along y
  options.with_padding(1);
  Tensor<float, 2, Strided> u(memory, {256, 128}, TensorOptions<2>(options).named("u"));
  Tensor<float, 2, Strided> du(memory, {256, 128}, TensorOptions<2>(options).named("du"));
  // DOC kernels-setup end

  std::vector<float> values(256 * 128);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 256);  // u = x
  u.fill_from(values.data());

  // DOC kernels-stencil begin
  u.exchange_padding();             // halos between the two partitions
  u.load_boundary(ZeroGradient{});  // and at the domain's edges
  for_each(ex, [] TESSERA_HOST_DEVICE (auto in, auto out) {
    float sum = 0;
    unrolled_for<decltype(in)::dims>([&](auto d) {
      sum += 0.5f * (*in.offset(d, 1) - *in.offset(d, -1));
    });
    *out = sum;
  }, u, du);
  // DOC kernels-stencil end

  // DOC kernels-reduce begin
  ReductionResult<float> total;
  reduce(ex, du, total, Sum{});
  ReductionResult<float> steepest;
  reduce(ex, du, steepest, Max{}, [] TESSERA_HOST_DEVICE (auto it) { return *it < 0 ? -*it : *it; });
  // DOC kernels-reduce end

  // du/dx of u = x is 1 inside and 0.5 in the first and last columns (zero-gradient padding).
  EXPECT_EQ(total.value(), 128.0f * (254.0f + 0.5f + 0.5f));
  EXPECT_EQ(steepest.value(), 1.0f);
  EXPECT_EQ(du.get(Index<2>{0, 5}), 0.5f);
  EXPECT_EQ(du.get(Index<2>{100, 64}), 1.0f);
}

}  // namespace
