// Strided, restriction and prolongation stencils: a 1-D array read along x from a 2-D loop, a
// fine grid restricted onto a coarse one and the coarse one prolonged back, each against the
// same sums written out by hand, on every backend, hybrid, and with tiling asked for; and the
// bad strides and reaches.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include "../support/backends.hpp"

#include <string>
#include <vector>

namespace {

namespace tl = tessera::loops;

struct Grids {
  std::vector<double> coarse, fine_back, scaled;
  std::size_t tiles = 0;
};

// Fine grid 2n x 2n, coarse n x n, both with a halo of 1; x array of size 2n.
Grids run(const std::string& spec, const tl::ContextOptions& options, int n = 24) {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const int m = 2 * n;
  tl::Dataset<double> fine(grid, {.size = {m, m, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "fine");
  tl::Dataset<double> back(grid, {.size = {m, m, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "back");
  tl::Dataset<double> coarse(grid, {.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "coarse");
  tl::Dataset<double> x(grid, {.size = {m, 1, 1}}, "x");
  tl::Dataset<double> scaled(grid, {.size = {m, m, 1}}, "scaled");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  tl::par_loop([](tl::Acc<double> v, const int* i) { v(0, 0) = 1.0 + i[0] + 100.0 * i[1]; }, "fill fine", grid,
               tl::Range::of(2, {-1, m + 1, -1, m + 1}), tl::write(fine, site), tl::idx());
  tl::par_loop([](tl::Acc<double> v, const int* i) { v(0, 0) = 0.5 * i[0]; }, "fill x", grid, tl::Range::of(2, {0, m, 0, 1}),
               tl::write(x, site), tl::idx());
  // Restriction: the mean of the four fine cells under a coarse one.
  const auto four = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, "four"), {2, 2, 1});
  tl::par_loop([](tl::Acc<double> c, tl::Acc<const double> f) { c(0, 0) = 0.25 * (f(0, 0) + f(1, 0) + f(0, 1) + f(1, 1)); },
               "restrict", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(coarse, site), tl::read(fine, four));
  tl::par_loop([](tl::Acc<double> c) { c(0, 0) = -7.0; }, "coarse halo", grid, tl::Range::of(2, {-1, n + 1, -1, 0}),
               tl::write(coarse, site));
  // Prolongation, halo included: fine index -1 reads coarse index -1 (floor division).
  const auto up = tl::StridedStencil::prolong(tl::Stencil(2, {{0, 0, 0}}, "up"), {2, 2, 1});
  tl::par_loop([](tl::Acc<double> f, tl::Acc<const double> c) { f(0, 0) = c(0, 0); }, "prolong", grid,
               tl::Range::of(2, {0, m, -1, m}), tl::write(back, site), tl::read(coarse, up));
  // A 1-D x array read from a 2-D loop: stride 0 pins y at the array's only row.
  // DOC loops-strided begin
  const auto along_x = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}, {-1, 0, 0}}, "along x"), {1, 0, 1});
  tl::par_loop([](tl::Acc<double> s, tl::Acc<const double> f, tl::Acc<const double> cx) {
    s(0, 0) = f(0, 0) * (cx(0, 0) - cx(-1, 0));
  }, "scale", grid, tl::Range::of(2, {1, m, 0, m}), tl::write(scaled, site), tl::read(fine, site), tl::read(x, along_x));
  // DOC loops-strided end
  Grids g;
  g.coarse = coarse.fetch();
  g.fine_back = back.fetch();
  g.scaled = scaled.fetch();
  g.tiles = context.last_tiles();
  return g;
}

double fine_at(int i, int j) { return 1.0 + i + 100.0 * j; }

class LoopsStrided : public ::testing::TestWithParam<std::string> {};

TEST_P(LoopsStrided, RestrictProlongAndOneDimensionalArraysMatchTheSumsByHand) {
  const int n = 24, m = 2 * n, pad = n + 2, fpad = m + 2;
  for (bool hybrid : {false, true}) {
    SCOPED_TRACE(hybrid ? "hybrid" : "plain");
    const Grids g = run(GetParam(), {.hybrid = hybrid, .inline_sites = 0}, n);
    // Padded arrays: index (i + 1) + (j + 1) * padded width.
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double want = 0.25 * (fine_at(2 * i, 2 * j) + fine_at(2 * i + 1, 2 * j) + fine_at(2 * i, 2 * j + 1) +
                                    fine_at(2 * i + 1, 2 * j + 1));
        ASSERT_EQ(g.coarse[std::size_t((i + 1) + (j + 1) * pad)], want) << i << "," << j;
      }
    for (int j = -1; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int ci = i / 2, cj = j < 0 ? -1 : j / 2;
        const double want = cj < 0 ? -7.0 : g.coarse[std::size_t((ci + 1) + (cj + 1) * pad)];
        ASSERT_EQ(g.fine_back[std::size_t((i + 1) + (j + 1) * fpad)], want) << i << "," << j;
      }
    for (int j = 0; j < m; ++j)
      for (int i = 1; i < m; ++i)
        ASSERT_EQ(g.scaled[std::size_t(i + j * m)], fine_at(i, j) * 0.5) << i << "," << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LoopsStrided, ::testing::ValuesIn(test_backends::spec_strings),
                         [](const auto& p) { return test_backends::name(p.param); });

TEST(LoopsStridedChains, TilingAskedForRunsUntiledWithTheSameResults) {
  const Grids plain = run("host", {.inline_sites = 0});
  const Grids tiled = run("host", {.tiled = true, .tile_rows = 4});
  EXPECT_EQ(tiled.tiles, 0u);
  EXPECT_EQ(tiled.coarse, plain.coarse);
  EXPECT_EQ(tiled.fine_back, plain.fine_back);
  EXPECT_EQ(tiled.scaled, plain.scaled);
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(LoopsStridedChains, BadStridesAndReachesAreErrors) {
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  EXPECT_NE(error_of([&] { tl::StridedStencil::strided(site, {-1, 1, 1}); }).find("stride -1 in dimension 0; a stride is 0 or more"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tl::StridedStencil::prolong(site, {2, 0, 1}); })
                .find("stride 0 in dimension 1; a prolongation stride is 1 or more"),
            std::string::npos);
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> coarse(grid, {.size = {8, 8, 1}}, "coarse"), fine(grid, {.size = {16, 16, 1}}, "fine");
  const auto two = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}, {1, 0, 0}}, "two"), {2, 2, 1});
  // Coarse sites 0..8 read fine x up to 2*8+1 = 17: past the 16 fine cells.
  const std::string m = error_of([&] {
    tl::par_loop([](tl::Acc<double> c, tl::Acc<const double> f) { c(0, 0) = f(0, 0) + f(1, 0); }, "restrict", grid,
                 tl::Range::of(2, {0, 9, 0, 8}), tl::write(coarse, tl::Stencil(2, {{0, 0, 0}}, "site")), tl::read(fine, two));
  });
  // The coarse write fails first (range [0, 9) past 8 coarse cells); a fitting range then fails on the fine grid.
  EXPECT_NE(m.find("dataset 'coarse'"), std::string::npos) << m;
  tl::Dataset<double> small(grid, {.size = {8, 8, 1}}, "small fine");
  const std::string m2 = error_of([&] {
    tl::par_loop([](tl::Acc<double> c, tl::Acc<const double> f) { c(0, 0) = f(0, 0) + f(1, 0); }, "restrict", grid,
                 tl::Range::of(2, {0, 8, 0, 8}), tl::write(coarse, site), tl::read(small, two));
  });
  EXPECT_NE(m2.find("par_loop 'restrict', dataset 'small fine': the range [0, 8) in dimension 0 through strided stencil "
                    "'two' (stride 2, offsets 0 to 1) reaches [0, 16), outside the dataset and its halo [0, 8)"),
            std::string::npos)
      << m2;
  EXPECT_EQ(context.pending(), 0u);
}

#if TESSERA_LOOPS_CHECKED
TEST(LoopsStridedChains, AnOffsetOutsideAStridedStencilIsAnErrorInCheckedBuilds) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> coarse(grid, {.size = {4, 4, 1}}, "coarse"), fine(grid, {.size = {8, 8, 1}, .d_p = {1, 1, 0}}, "fine");
  const auto one = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}}, "one"), {2, 2, 1});
  tl::par_loop([](tl::Acc<double> c, tl::Acc<const double> f) { c(0, 0) = f(1, 1); }, "restrict", grid,
               tl::Range::of(2, {0, 4, 0, 4}), tl::write(coarse, tl::Stencil(2, {{0, 0, 0}}, "site")), tl::read(fine, one));
  const std::string m = error_of([&] { context.execute(); });
  EXPECT_NE(m.find("offset (1, 1) is not in stencil 'one'"), std::string::npos) << m;
}
#endif

}  // namespace
