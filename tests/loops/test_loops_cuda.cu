// Loops on a real GPU: chains with 5- and 7-point stencils, strided reads, the site index,
// global values and every reduction, on the GPU alone and split between the CPU workers and the
// GPU, equal bit for bit to a host run (this file is compiled with --fmad=false, so the GPU does
// the host's arithmetic; the reductions run in the host's order). Skips without a GPU.
#include "loops_host_user.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

namespace tl = tessera::loops;

bool have_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  (void)cudaGetLastError();
  return false;
}

#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine: the loops' GPU kernels are not run"

tessera::DeviceSet gpu() {
  tessera::CudaOptions o;
  o.ordinals = {0};
  o.memory_bytes = std::size_t{512} << 20;
  o.pinned_host_bytes = std::size_t{16} << 20;
  return tessera::DeviceSet::cuda(o);
}

struct Heat2D {
  std::vector<double> field;
  double total = 0, low = 0, high = 0, strided = 0;
};

// A 2-D heat chain, a min/max/sum over it, and a read of a coarse copy through a prolongation
// stencil, in `steps` chains (each ends at a reduction).
Heat2D heat_2d(tessera::DeviceSet& devices, const tl::ContextOptions& options, int n, int steps) {
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> t(grid, shape, "t"), next(grid, shape, "next");
  tl::Dataset<double> coarse(grid, {.size = {n / 2, n / 2, 1}}, "coarse");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const auto up = tl::StridedStencil::prolong(tl::Stencil(2, {{0, 0, 0}}, "up"), {2, 2, 1});
  const tl::Range all = tl::Range::of(2, {-1, n + 1, -1, n + 1});
  const tl::Range interior = tl::Range::of(2, {0, n, 0, n});

  tl::par_loop(
      [] TESSERA_HOST_DEVICE(tl::Acc<double> v, const int* idx) {
        // No transcendental functions: the GPU's sin is not glibc's to the last bit.
        v(0, 0) =
            0.01 * ((idx[0] * 7 + idx[1] * 13) % 17) / (1.0 + 0.5 * idx[1]) + (idx[0] == 7 && idx[1] == 9 ? 4.0 : 0.0);
      },
      "initial", grid, all, tl::write(t, site), tl::idx());
  tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<double> c, const int* idx) { c(0, 0) = 0.5 * idx[0] - 0.25 * idx[1]; },
               "coarse", grid, tl::Range::of(2, {0, n / 2, 0, n / 2}), tl::write(coarse, site), tl::idx());
  Heat2D out;
  tl::Reduction<double> total(context, tl::ReduceOp::inc, "total"), low(context, tl::ReduceOp::min, "low"),
      high(context, tl::ReduceOp::max, "high"), strided(context, tl::ReduceOp::inc, "strided");
  for (int s = 0; s < steps; ++s) {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<double> o, tl::Acc<const double> i, const double& k) {
          o(0, 0) = i(0, 0) + k * (i(1, 0) + i(-1, 0) + i(0, 1) + i(0, -1) - 4.0 * i(0, 0));
        },
        "diffuse", grid, interior, tl::write(next, site), tl::read(t, cross), tl::gbl(0.1));
    tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<double> o, tl::Acc<const double> i) { o(0, 0) = i(0, 0); }, "copy",
                 grid, interior, tl::write(t, site), tl::read(next, site));
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<const double> v, double& sum, double& lo, double& hi) {
          sum += v(0, 0);
          lo = v(0, 0) < lo ? v(0, 0) : lo;
          hi = v(0, 0) > hi ? v(0, 0) : hi;
        },
        "stats", grid, interior, tl::read(t, site), tl::reduce(total), tl::reduce(low), tl::reduce(high));
    tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<const double> v, tl::Acc<const double> c,
                                        double& sum) { sum += v(0, 0) * c(0, 0); },
                 "weighted", grid, interior, tl::read(t, site), tl::read(coarse, up), tl::reduce(strided));
    out.total = total.get();
  }
  out.low = low.get();
  out.high = high.get();
  out.strided = strided.get();
  out.field = t.fetch();
  return out;
}

void expect_same_bits(const Heat2D& a, const Heat2D& b) {
  ASSERT_EQ(a.field.size(), b.field.size());
  for (std::size_t i = 0; i < a.field.size(); ++i) ASSERT_EQ(a.field[i], b.field[i]) << "element " << i;
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.strided, b.strided);
}

TEST(LoopsCuda, A2DChainOnTheGpuEqualsTheHostBitForBit) {
  REQUIRE_GPU();
  auto host = tessera::DeviceSet::select("host");
  const Heat2D expected = heat_2d(host, {}, 300, 6);
  auto devices = gpu();
  const Heat2D got = heat_2d(devices, {}, 300, 6);
  expect_same_bits(got, expected);
  EXPECT_GT(expected.high, 0.5);
}

TEST(LoopsCuda, HybridCpuAndGpuEqualTheHostWhileTheSplitMoves) {
  REQUIRE_GPU();
  auto host = tessera::DeviceSet::select("host");
  const Heat2D expected = heat_2d(host, {}, 512, 8);
  auto devices = gpu();
  const Heat2D got = heat_2d(devices, {.hybrid = true, .balance_threshold = 0.0}, 512, 8);
  expect_same_bits(got, expected);
  const Heat2D tiled = heat_2d(devices, {.tiled = true, .tile_rows = 16, .hybrid = true}, 512, 8);
  expect_same_bits(tiled, expected);
  // The weighted sum reads through a prolongation stencil: that chain runs per loop.
  const Heat2D overlapped = heat_2d(devices, {.hybrid = true, .overlapped_tiles = true}, 512, 8);
  expect_same_bits(overlapped, expected);
}

// Six chains of a diffusion over n x n, each run at once, so that the balancer learns from each.
std::vector<tl::Share> balanced_diffusion(tessera::DeviceSet& devices, int n) {
  // DOC cuda begin
  tessera::Executor executor;
  tl::Context context(devices, executor, {.hybrid = true, .balance_threshold = 0.0});
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> t(grid, {.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "t");
  tl::Dataset<double> next(grid, {.size = {n, n, 1}}, "next");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  for (int step = 0; step < 6; ++step) {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<double> o, tl::Acc<const double> i) {
          o(0, 0) = i(0, 0) + 0.1 * (i(1, 0) + i(-1, 0) + i(0, 1) + i(0, -1) - 4.0 * i(0, 0));
        },
        "diffuse", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(next, site), tl::read(t, cross));
    context.execute();
  }
  // DOC cuda end
  return context.split_of("diffuse");
}

TEST(LoopsCuda, TheBalancerMeasuresTheGpuAndSplitsEveryRow) {
  REQUIRE_GPU();
  auto devices = gpu();
  const int n = 2048;
  const std::vector<tl::Share> split = balanced_diffusion(devices, n);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].participant, "host");
  EXPECT_EQ(split[0].rows + split[1].rows, n);
  // A GPU outruns two CPU cores many times over on a stencil: it must have been given most rows.
  EXPECT_GT(split[1].rows, n / 2) << "host " << split[0].rows << " rows, " << split[1].participant << " "
                                  << split[1].rows;
}

// Three smoothing steps of a 7-point average over a 40^3 cube of floats, and their sum.
std::pair<std::vector<float>, float> smooth_3d(tessera::DeviceSet& devices) {
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block cube(context, 3, "cube");
  const int n = 40;
  const tl::Shape shape{.size = {n, n, n}, .d_m = {-1, -1, -1}, .d_p = {1, 1, 1}};
  tl::Dataset<float> a(cube, shape, "a"), b(cube, shape, "b");
  const tl::Stencil site(3, {{0, 0, 0}}, "site");
  const tl::Stencil seven(3, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}, "7pt");
  tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<float> v, const int* i) { v(0, 0, 0) = float(i[0] * 3 + i[1] - i[2]); },
               "fill", cube, tl::Range::of(3, {-1, n + 1, -1, n + 1, -1, n + 1}), tl::write(a, site), tl::idx());
  tl::Reduction<float> sum(context, tl::ReduceOp::inc, "sum");
  for (int s = 0; s < 3; ++s) {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<float> o, tl::Acc<const float> i) {
          o(0, 0, 0) =
              (i(0, 0, 0) + i(1, 0, 0) + i(-1, 0, 0) + i(0, 1, 0) + i(0, -1, 0) + i(0, 0, 1) + i(0, 0, -1)) / 7.0f;
        },
        "average", cube, tl::Range::of(3, {0, n, 0, n, 0, n}), tl::write(b, site), tl::read(a, seven));
    tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<float> o, tl::Acc<const float> i) { o(0, 0, 0) = i(0, 0, 0); }, "back",
                 cube, tl::Range::of(3, {0, n, 0, n, 0, n}), tl::write(a, site), tl::read(b, site));
  }
  tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<const float> v, float& s) { s += v(0, 0, 0); }, "sum", cube,
               tl::Range::of(3, {0, n, 0, n, 0, n}), tl::read(a, site), tl::reduce(sum));
  const float total = sum.get();
  return std::make_pair(a.fetch(), total);
}

TEST(LoopsCuda, A3DSevenPointChainEqualsTheHost) {
  REQUIRE_GPU();
  auto host = tessera::DeviceSet::select("host");
  const auto expected = smooth_3d(host);
  auto devices = gpu();
  const auto got = smooth_3d(devices);
  EXPECT_EQ(got.first, expected.first);
  EXPECT_EQ(got.second, expected.second);
}

template <typename T, typename S = tessera::Owned>
struct Fluid : tessera::Record<S, T, tessera::Vector<T, 2>> {
  TESSERA_RECORD(Fluid)
  TESSERA_FIELD(density, 0)
  TESSERA_FIELD(velocity, 1)
};

// A Record dataset in the SoA layout (coalesced on a GPU): a gradient into the velocity and a
// divergence back into the density, then the mass.
std::pair<std::vector<Fluid<double>>, double> fluid_steps(tessera::DeviceSet& devices,
                                                          const tl::ContextOptions& options) {
  using L = tessera::Strided;
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const int n = 200;
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<Fluid<double>, L> a(grid, shape, "a"), b(grid, shape, "b");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  tl::par_loop(
      [] TESSERA_HOST_DEVICE(tl::Acc<Fluid<double>, L> f, const int* i) {
        f(0, 0).density() = double((i[0] * 7 + i[1] * 3) % 13) / 13.0;
        f(0, 0).velocity().x = 0.0;
        f(0, 0).velocity().y = 0.0;
      },
      "fill", grid, tl::Range::of(2, {-1, n + 1, -1, n + 1}), tl::write(a, site), tl::idx());
  for (int s = 0; s < 3; ++s) {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<Fluid<double>, L> o, tl::Acc<const Fluid<double>, L> i) {
          o(0, 0).velocity().x = 0.5 * (i(1, 0).density() - i(-1, 0).density());
          o(0, 0).velocity().y = 0.5 * (i(0, 1).density() - i(0, -1).density());
          o(0, 0).density() = i(0, 0).density();
        },
        "gradient", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(b, site), tl::read(a, cross));
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<Fluid<double>, L> o, tl::Acc<const Fluid<double>, L> i) {
          o(0, 0).density() = i(0, 0).density() - 0.1 * (i(1, 0).velocity().x - i(-1, 0).velocity().x +
                                                         i(0, 1).velocity().y - i(0, -1).velocity().y);
          o(0, 0).velocity() = i(0, 0).velocity();
        },
        "divergence", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(a, site), tl::read(b, cross));
  }
  tl::Reduction<double> mass(context, tl::ReduceOp::inc, "mass");
  tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<const Fluid<double>, L> f, double& m) { m += f(0, 0).density(); }, "mass",
               grid, tl::Range::of(2, {0, n, 0, n}), tl::read(a, site), tl::reduce(mass));
  const double total = mass.get();
  return std::make_pair(a.fetch(), total);
}

TEST(LoopsCuda, RecordDatasetsInTheSoaLayoutEqualTheHost) {
  REQUIRE_GPU();
  auto host = tessera::DeviceSet::select("host");
  const auto want = fluid_steps(host, {});
  auto devices = gpu();
  for (const tl::ContextOptions& options : {tl::ContextOptions{}, tl::ContextOptions{.hybrid = true},
                                            tl::ContextOptions{.hybrid = true, .overlapped_tiles = true}}) {
    const auto got = fluid_steps(devices, options);
    EXPECT_EQ(got.second, want.second);
    ASSERT_EQ(got.first.size(), want.first.size());
    for (std::size_t e = 0; e < want.first.size(); ++e) {
      ASSERT_EQ(got.first[e].density(), want.first[e].density()) << "element " << e;
      ASSERT_EQ(got.first[e].velocity().x, want.first[e].velocity().x) << "element " << e;
    }
  }
}

TEST(LoopsCuda, ALoopCompiledWithoutNvccRefusesNamingTheLoop) {
  REQUIRE_GPU();
  auto devices = gpu();
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> u(grid, {.size = {8, 8, 1}}, "u");
  record_host_only_loop(grid, u);
  try {
    context.execute();
    FAIL() << "a loop g++ compiled ran on a GPU";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("host-only fill"), std::string::npos) << what;
    EXPECT_NE(what.find("nvcc"), std::string::npos) << what;
  }
}

}  // namespace
