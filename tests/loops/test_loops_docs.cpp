// The examples of docs/loops.md, run as tests (the docs check keeps the two word for word).
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(LoopsDocs, HeatStepsKeepTheTotalWhileTheSpotIsFarFromTheEdge) {
  // DOC loops-heat begin
  namespace tl = tessera::loops;
  auto devices = tessera::DeviceSet::select("sim:2");
  tessera::Executor executor;
  tl::Context context(devices, executor);

  const int n = 64;
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> t(grid, shape, "t"), next(grid, shape, "next");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const tl::Range interior = tl::Range::of(2, {0, n, 0, n});

  tl::par_loop([](tl::Acc<double> v, const int* idx) { v(0, 0) = (idx[0] == 32 && idx[1] == 32) ? 1.0 : 0.0; },
               "hot spot", grid, interior, tl::write(t, site), tl::idx());
  for (int step = 0; step < 10; ++step) {
    tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in, const double& k) {
      out(0, 0) = in(0, 0) + k * (in(1, 0) + in(-1, 0) + in(0, 1) + in(0, -1) - 4.0 * in(0, 0));
    }, "diffuse", grid, interior, tl::write(next, site), tl::read(t, cross), tl::gbl(0.1));
    tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in) { out(0, 0) = in(0, 0); }, "copy", grid,
                 interior, tl::write(t, site), tl::read(next, site));
  }
  tl::Reduction<double> total(context, tl::ReduceOp::inc, "total");
  tl::par_loop([](tl::Acc<const double> v, double& s) { s += v(0, 0); }, "total", grid, interior,
               tl::read(t, site), tl::reduce(total));
  const double heat = total.get();  // runs the 22 recorded loops
  // DOC loops-heat end
  EXPECT_NEAR(heat, 1.0, 1e-12);  // the spot never reaches the zero halo in 10 steps
  EXPECT_EQ(context.executed(), 22u);
}

TEST(LoopsDocs, ATiledChainGivesTheUntiledBits) {
  namespace tl = tessera::loops;
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  auto smooth = [](tl::Context& context) {
    tl::Block grid(context, 2, "grid");
    tl::Dataset<double> a(grid, {.size = {100, 100, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "a");
    tl::Dataset<double> b(grid, {.size = {100, 100, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "b");
    const tl::Stencil site(2, {{0, 0, 0}}, "site"), cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
    const tl::Range all = tl::Range::of(2, {0, 100, 0, 100});
    tl::par_loop([](tl::Acc<double> v, const int* idx) { v(0, 0) = idx[0] % 7 + idx[1] % 5; }, "init", grid, all,
                 tl::write(a, site), tl::idx());
    for (int i = 0; i < 8; ++i) {
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> v) {
        o(0, 0) = 0.2 * (v(0, 0) + v(1, 0) + v(-1, 0) + v(0, 1) + v(0, -1));
      }, "smooth", grid, all, tl::write(b, site), tl::read(a, cross));
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) = v(0, 0); }, "copy", grid, all,
                   tl::write(a, site), tl::read(b, site));
    }
    return a.fetch();
  };
  // DOC loops-tiled begin
  tl::Context plain(devices, executor);
  tl::Context tiled(devices, executor, {.tiled = true, .tile_rows = 16});  // tile_rows 0: from the cache size
  EXPECT_EQ(smooth(tiled), smooth(plain));
  // DOC loops-tiled end
  EXPECT_GT(tiled.last_tiles(), 6u);
}

TEST(LoopsDocs, HybridExampleSplitsEveryLoopAmongTheHostAndBothDevices) {
  namespace tl = tessera::loops;
  // DOC loops-hybrid begin
  auto devices = tessera::DeviceSet::select("sim:2:32MiB:speed=1,4");
  tessera::Executor executor;
  tl::Context context(devices, executor, {.hybrid = true});
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> t(grid, {.size = {256, 512, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "t");
  tl::Dataset<double> next(grid, {.size = {256, 512, 1}}, "next");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const tl::Range inner = tl::Range::of(2, {0, 256, 0, 512});
  for (int step = 0; step < 8; ++step) {
    tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) {
      o(0, 0) = i(0, 0) + 0.1 * (i(1, 0) + i(-1, 0) + i(0, 1) + i(0, -1) - 4.0 * i(0, 0));
    }, "diffuse", grid, inner, tl::write(next, site), tl::read(t, cross));
    tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) { o(0, 0) = i(0, 0); }, "copy", grid, inner,
                 tl::write(t, site), tl::read(next, site));
    context.execute();  // a chain a step: the balancer learns from each
  }
  const std::vector<tl::Share> split = context.split_of("diffuse");  // host, sim:0, sim:1
  // DOC loops-hybrid end
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].participant, "host");
  EXPECT_EQ(split[0].rows + split[1].rows + split[2].rows, 512);
  for (const tl::Share& s : split) EXPECT_GT(s.rows, 0) << s.participant;
}

}  // namespace
