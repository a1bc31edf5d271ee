// The loops front end on real data: 1-, 2- and 3-D loops with halos and stencils, globals, the
// site index, partial-row ranges, and deterministic reductions, each checked against plain
// loops over the same padded arrays, on host, sim:1 and sim:4; and lazy chains.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include "../support/backends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace tl = tessera::loops;

class Loops : public ::testing::TestWithParam<std::string> {
 protected:
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  tessera::Executor executor;
  // Every chain through the graph, however small (see SmallHostChainsRunInline for the rest), in
  // equal parts on devices: what these tests check must not hang on timing (test_loops_hybrid
  // covers balancing).
  tl::Context context{devices, executor, {.balance = false, .inline_sites = 0}};
};

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

TEST_P(Loops, SevenPointStencilIn3DMatchesThePlainLoop) {
  tl::Block block(context, 3, "cube");
  const tl::Shape shape{.size = {9, 7, 11}, .base = {1, -2, 0}, .d_m = {-1, -1, -1}, .d_p = {1, 2, 1}};
  tl::Dataset<double> a(block, shape, "a"), b(block, shape, "b");
  const auto input = random_values(a.elements(), 3);
  a.assign(input);
  const tl::Stencil seven(3, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}, "7pt");
  const tl::Stencil zero(3, {{0, 0, 0}}, "000");
  const tl::Range r = tl::Range::of(3, {1, 10, -2, 5, 0, 11});
  tl::par_loop([](tl::Acc<double> out, tl::Acc<const double> in, const double& c) {
    out(0, 0, 0) = c * in(0, 0, 0) + in(1, 0, 0) + in(-1, 0, 0) + in(0, 1, 0) + in(0, -1, 0) + in(0, 0, 1) + in(0, 0, -1);
  }, "laplace", block, r, tl::write(b, zero), tl::read(a, seven), tl::gbl(-6.0));
  EXPECT_EQ(context.pending(), 1u);  // recorded, not run
  const auto got = b.fetch();
  EXPECT_EQ(context.pending(), 0u);
  std::vector<double> want(b.elements(), 0.0);
  for (int k = 0; k < 11; ++k)
    for (int j = -2; j < 5; ++j)
      for (int i = 1; i < 10; ++i)
        want[b.index(i, j, k)] = -6.0 * input[a.index(i, j, k)] + input[a.index(i + 1, j, k)] +
                                 input[a.index(i - 1, j, k)] + input[a.index(i, j + 1, k)] +
                                 input[a.index(i, j - 1, k)] + input[a.index(i, j, k + 1)] + input[a.index(i, j, k - 1)];
  EXPECT_EQ(got, want);
}

TEST_P(Loops, OneDimensionalChainWithTheSiteIndex) {
  tl::Block line(context, 1, "line");
  tl::Dataset<int> x(line, {.size = {100, 1, 1}, .d_m = {-2, 0, 0}, .d_p = {2, 0, 0}}, "x");
  tl::Dataset<int> y(line, {.size = {100, 1, 1}, .d_m = {-2, 0, 0}, .d_p = {2, 0, 0}}, "y");
  const tl::Stencil zero(1, {{0, 0, 0}}, "0"), wide(1, {{-2, 0, 0}, {2, 0, 0}}, "+-2");
  tl::par_loop([](tl::Acc<int> v, const int* idx) { v(0) = idx[0] * idx[0]; }, "square", line,
               tl::Range::of(1, {-2, 102}), tl::write(x, zero), tl::idx());
  tl::par_loop([](tl::Acc<int> out, tl::Acc<const int> in) { out(0) = in(2) - in(-2); }, "difference", line,
               tl::Range::of(1, {0, 100}), tl::write(y, zero), tl::read(x, wide));
  const auto got = y.fetch();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[y.index(i)], (i + 2) * (i + 2) - (i - 2) * (i - 2)) << i;
  EXPECT_EQ(got[y.index(-1)], 0);  // outside the range: untouched
}

TEST_P(Loops, ARangeCoveringPartOfEachRowLeavesTheRestAsItWas) {
  tl::Block block(context, 2, "grid");
  tl::Dataset<double> a(block, {.size = {16, 12, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "a");
  const auto input = random_values(a.elements(), 5);
  a.assign(input);
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) = 2.0 * v(0, 0); }, "double", block, tl::Range::of(2, {3, 9, 2, 10}),
               tl::rw(a, zero));
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) = -1.0; }, "mark", block, tl::Range::of(2, {10, 12, 0, 12}),
               tl::write(a, zero));
  const auto got = a.fetch();
  for (int j = -1; j < 13; ++j)
    for (int i = -1; i < 17; ++i) {
      double want = input[a.index(i, j)];
      if (i >= 3 && i < 9 && j >= 2 && j < 10) want *= 2.0;
      if (i >= 10 && i < 12 && j >= 0 && j < 12) want = -1.0;
      ASSERT_EQ(got[a.index(i, j)], want) << i << ", " << j;
    }
}

TEST_P(Loops, ReductionsHaveTheSameBitsAsTheRowOrderedPlainSum) {
  tl::Block block(context, 2, "grid");
  tl::Dataset<double> a(block, {.size = {257, 131, 1}}, "a");
  const auto input = random_values(a.elements(), 9);
  a.assign(input);
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  tl::Reduction<double> sum(context, tl::ReduceOp::inc, "sum"), lo(context, tl::ReduceOp::min, "lo"),
      hi(context, tl::ReduceOp::max, "hi");
  tl::Reduction<int> count(context, tl::ReduceOp::inc, "count");
  tl::par_loop([](tl::Acc<const double> v, double& s, double& mn, double& mx, int& c) {
    s += v(0, 0) * v(0, 0);
    mn = std::fmin(mn, v(0, 0));
    mx = std::fmax(mx, v(0, 0));
    c += v(0, 0) > 0 ? 1 : 0;
  }, "stats", block, tl::Range::of(2, {0, 257, 0, 131}), tl::read(a, zero), tl::reduce(sum), tl::reduce(lo),
               tl::reduce(hi), tl::reduce(count));
  double want_sum = 0, want_lo = INFINITY, want_hi = -INFINITY;
  int want_count = 0;
  for (int j = 0; j < 131; ++j) {
    double row = 0;
    for (int i = 0; i < 257; ++i) {
      const double v = input[a.index(i, j)];
      row += v * v;
      want_lo = std::fmin(want_lo, v);
      want_hi = std::fmax(want_hi, v);
      want_count += v > 0;
    }
    want_sum += row;
  }
  EXPECT_EQ(sum.get(), want_sum);
  EXPECT_EQ(lo.get(), want_lo);
  EXPECT_EQ(hi.get(), want_hi);
  EXPECT_EQ(count.get(), want_count);
}

TEST_P(Loops, ChainsRunWhenAValueIsNeededAndAgainAfter) {
  tl::Block block(context, 2, "grid");
  tl::Dataset<double> a(block, {.size = {32, 32, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "a");
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  tl::Reduction<double> total(context, tl::ReduceOp::inc, "total");
  for (int step = 1; step <= 3; ++step) {
    tl::par_loop([](tl::Acc<double> v, const double& add) { v(0, 0) += add; }, "add", block,
                 tl::Range::of(2, {0, 32, 0, 32}), tl::inc(a, zero), tl::gbl(double(step)));
    tl::par_loop([](tl::Acc<const double> v, double& t) { t += v(0, 0); }, "sum", block,
                 tl::Range::of(2, {0, 32, 0, 32}), tl::read(a, zero), tl::reduce(total));
    EXPECT_EQ(context.pending(), 2u);
    EXPECT_EQ(total.get(), 32.0 * 32.0 * step * (step + 1) / 2);
    EXPECT_EQ(context.pending(), 0u);
  }
  EXPECT_EQ(context.executed(), 6u);
  EXPECT_EQ(context.graphs_built(), 1u);  // one shape, three global values: one graph
  context.execute();                      // nothing pending: nothing happens
  EXPECT_EQ(context.executed(), 6u);
  // Another shape builds another graph; the first shape after it runs its kept graph again.
  tl::par_loop([](tl::Acc<const double> v, double& t) { t += v(0, 0); }, "corner", block,
               tl::Range::of(2, {0, 2, 0, 2}), tl::read(a, zero), tl::reduce(total));
  EXPECT_EQ(total.get(), 4.0 * 6.0);
  EXPECT_EQ(context.graphs_built(), 2u);
  tl::par_loop([](tl::Acc<double> v, const double& add) { v(0, 0) += add; }, "add", block,
               tl::Range::of(2, {0, 32, 0, 32}), tl::inc(a, zero), tl::gbl(1.0));
  tl::par_loop([](tl::Acc<const double> v, double& t) { t += v(0, 0); }, "sum", block,
               tl::Range::of(2, {0, 32, 0, 32}), tl::read(a, zero), tl::reduce(total));
  EXPECT_EQ(total.get(), 32.0 * 32.0 * 7.0);
  EXPECT_EQ(context.graphs_built(), 2u);
}

TEST(LoopsInline, SmallHostChainsRunInlineWithTheGraphsResults) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  auto run = [&](std::int64_t inline_sites, std::size_t* graphs) {
    tl::Context context(devices, executor, {.inline_sites = inline_sites});
    tl::Block block(context, 2, "grid");
    tl::Dataset<double> a(block, {.size = {40, 30, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "a"),
        b(block, {.size = {40, 30, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "b");
    a.assign(random_values(a.elements(), 3));
    const tl::Stencil zero(2, {{0, 0, 0}}, "00"), cross(2, {{0, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}}, "cross");
    tl::Reduction<double> top(context, tl::ReduceOp::max, "top");
    for (int s = 0; s < 3; ++s) {
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) { o(0, 0) = 0.5 * i(0, 0) + i(1, 0) - i(0, -1) * i(0, 1); },
                   "mix", block, tl::Range::of(2, {0, 40, 0, 30}), tl::write(b, zero), tl::read(a, cross));
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i, double& m) {
        o(0, 0) = i(0, 0);
        m = std::max(m, i(0, 0));
      }, "back", block, tl::Range::of(2, {0, 40, 0, 30}), tl::write(a, zero), tl::read(b, zero), tl::reduce(top));
    }
    const double m = top.get();
    *graphs = context.graphs_built();
    std::vector<double> out = a.fetch();
    out.push_back(m);
    return out;
  };
  std::size_t inline_graphs = 9, graph_graphs = 9;
  EXPECT_EQ(run(1 << 20, &inline_graphs), run(0, &graph_graphs));
  EXPECT_EQ(inline_graphs, 0u);
  EXPECT_EQ(graph_graphs, 1u);
}

TEST_P(Loops, MinAndMaxModesCombineIntoTheSite) {
  tl::Block block(context, 2, "grid");
  tl::Dataset<double> lo(block, {.size = {16, 12, 1}}, "lo"), hi(block, {.size = {16, 12, 1}}, "hi");
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  const tl::Range all = tl::Range::of(2, {0, 16, 0, 12});
  tl::par_loop([](tl::Acc<double> a, tl::Acc<double> b) { a(0, 0) = 5.0; b(0, 0) = 5.0; }, "five", block, all,
               tl::write(lo, zero), tl::write(hi, zero));
  tl::par_loop([](tl::Acc<double> a, tl::Acc<double> b, const int* i) {
    a(0, 0) = std::min(a(0, 0), double(i[0] - i[1]));
    b(0, 0) = std::max(b(0, 0), double(i[0] - i[1]));
  }, "bound", block, all, tl::min(lo, zero), tl::max(hi, zero), tl::idx());
  const std::vector<double> a = lo.fetch(), b = hi.fetch();
  // "five" writes 192 doubles twice; "bound" reads and writes 192 twice: 3 * 2 * 192 * 8 bytes.
  EXPECT_EQ(context.bytes_required(), 9216u);
  for (int j = 0; j < 12; ++j)
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(a[lo.index(i, j)], std::min(5.0, double(i - j)));
      EXPECT_EQ(b[hi.index(i, j)], std::max(5.0, double(i - j)));
    }
}

TEST_P(Loops, MinAndMaxReductionsKeepANaNFromAnyRow) {
  tl::Block block(context, 2, "grid");
  tl::Dataset<double> a(block, {.size = {8, 40, 1}}, "a");
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  const tl::Range all = tl::Range::of(2, {0, 8, 0, 40});
  for (int nan_row : {0, 17, 39}) {
    tl::par_loop([nan_row](tl::Acc<double> v, const int* i) {
      v(0, 0) = (i[1] == nan_row && i[0] == 3) ? std::numeric_limits<double>::quiet_NaN() : double(i[0] + i[1]);
    }, "fill", block, all, tl::write(a, zero), tl::idx());
    tl::Reduction<double> lo(context, tl::ReduceOp::min, "lo"), hi(context, tl::ReduceOp::max, "hi");
    // A site's own combine is the kernel's; rows combine in the library, where a NaN row must win.
    tl::par_loop([](tl::Acc<const double> v, double& l, double& h) {
      const double x = v(0, 0);
      l = (x != x || l != l) ? x + l : std::min(l, x);
      h = (x != x || h != h) ? x + h : std::max(h, x);
    }, "bounds", block, all, tl::read(a, zero), tl::reduce(lo), tl::reduce(hi));
    EXPECT_TRUE(std::isnan(lo.get())) << "NaN in row " << nan_row;
    EXPECT_TRUE(std::isnan(hi.get())) << "NaN in row " << nan_row;
  }
}

TEST(LoopsInline, ANegativeSiteCountIsAnError) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  try {
    tl::Context c(devices, executor, {.inline_sites = -1});
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inline_sites -1"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Loops, ::testing::ValuesIn(test_backends::spec_strings),
                         [](const auto& p) { return test_backends::name(p.param); });

}  // namespace
