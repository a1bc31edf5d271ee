// Hybrid and balanced chains: the balancer's rule on made-up times; hybrid runs (CPU workers
// beside sim devices, splits moving as the balancer learns) equal to host runs bit for bit;
// every split decision in the trace; and the bad options.
#include "loops/balancer.hpp"
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/core/trace.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace {

namespace tl = tessera::loops;
using tessera::loops::detail::Balancer;

TEST(LoopsBalancer, SharesAreEqualUntilEveryParticipantIsMeasured) {
  Balancer b({"host", "sim:0", "sim:1"}, 0.5);
  EXPECT_EQ(b.split("k", 10), (std::vector<int>{4, 3, 3}));
  b.measured("k", {4, 3, 0}, {1.0, 1.0, 0.0});  // sim:1 did nothing: not measured
  EXPECT_EQ(b.split("k", 10), (std::vector<int>{4, 3, 3}));
  b.measured("k", {4, 3, 3}, {1.0, 1.0, 20e-6});  // a part too short to time: all ignored
  EXPECT_EQ(b.split("k", 10), (std::vector<int>{4, 3, 3}));
  EXPECT_EQ(b.split("k", 2), (std::vector<int>{1, 1, 0}));  // fewer rows than participants
}

TEST(LoopsBalancer, RowsFollowMeasuredRatesSoAllFinishTogether) {
  Balancer b({"host", "sim:0"}, 0.5);
  b.split("k", 1000);
  b.measured("k", {500, 500}, {4.0, 1.0});  // sim:0 four times as fast per row
  EXPECT_EQ(b.split("k", 1000), (std::vector<int>{200, 800}));
  EXPECT_EQ(b.last_split("k"), (std::vector<int>{200, 800}));
  EXPECT_TRUE(b.last_split("other").empty());
  // The newest chain weighs `rate`: sim:0 now as fast as host per row (8e-3 s), averaged with
  // its 2e-3 s before gives 5e-3 against the host's 8e-3: 1000 rows * 8/13 on sim:0.
  b.measured("k", {200, 800}, {1.6, 6.4});
  EXPECT_EQ(b.split("k", 1000), (std::vector<int>{385, 615}));
}

TEST(LoopsBalancer, SmallMovesKeepTheSplitBigOnesReplaceIt) {
  Balancer b({"a", "b"}, 1.0);
  b.split("k", 1000);
  b.measured("k", {500, 500}, {1.0, 1.0});
  EXPECT_EQ(b.split("k", 1000), (std::vector<int>{500, 500}));
  // Ideal 512/488 would finish at 1.025 s instead of 1.05 s: not 3 % sooner, kept.
  b.measured("k", {500, 500}, {1.0, 1.05});
  EXPECT_EQ(b.split("k", 1000), (std::vector<int>{500, 500}));
  // Ideal 545/455 finishes at 1.09 s instead of 1.2 s: replaced.
  b.measured("k", {500, 500}, {1.0, 1.2});
  EXPECT_EQ(b.split("k", 1000), (std::vector<int>{545, 455}));
}

TEST(LoopsBalancer, RejectsARateOutsideZeroToOne) {
  EXPECT_THROW(Balancer({"a"}, 0.0), tessera::Error);
  EXPECT_THROW(Balancer({"a"}, 1.5), tessera::Error);
  EXPECT_THROW(Balancer({"a"}, 0.5, -0.1), tessera::Error);
  EXPECT_THROW(Balancer({"a"}, 0.5, 1.0), tessera::Error);
  auto devices = tessera::DeviceSet::select("sim:1:16MiB");
  tessera::Executor executor;
  try {
    tl::Context context(devices, executor, tl::ContextOptions{.hybrid = true, .balance_rate = -0.5});
    FAIL() << "a negative balance_rate was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("balance_rate -0.5"), std::string::npos) << e.what();
  }
}

/// A heat chain of `steps` steps plus a sum; returns the field and the sum after each chain.
struct HeatRun {
  std::vector<std::vector<double>> fields;
  std::vector<double> sums;
};

HeatRun heat(const std::string& spec, const tl::ContextOptions& options, int chains, int nx, int ny,
             std::vector<tl::Share>* split = nullptr) {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {nx, ny, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> t(grid, shape, "t"), next(grid, shape, "next");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const tl::Range all = tl::Range::of(2, {-1, nx + 1, -1, ny + 1}), inner = tl::Range::of(2, {0, nx, 0, ny});
  tl::par_loop([](tl::Acc<double> v, const int* i) { v(0, 0) = std::sin(0.1 * i[0]) + std::cos(0.07 * i[1] * i[0]); },
               "init", grid, all, tl::write(t, site), tl::idx());
  HeatRun run;
  tl::Reduction<double> total(context, tl::ReduceOp::inc, "total");
  for (int c = 0; c < chains; ++c) {
    for (int s = 0; s < 4; ++s) {
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) {
        o(0, 0) = i(0, 0) + 0.2 * (i(1, 0) + i(-1, 0) + i(0, 1) + i(0, -1) - 4.0 * i(0, 0));
      }, "diffuse", grid, inner, tl::write(next, site), tl::read(t, cross));
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) { o(0, 0) = i(0, 0); }, "copy", grid, inner,
                   tl::write(t, site), tl::read(next, site));
    }
    tl::par_loop([](tl::Acc<const double> v, double& s) { s += v(0, 0) * v(0, 0); }, "energy", grid, inner,
                 tl::read(t, site), tl::reduce(total));
    run.sums.push_back(total.get());
    run.fields.push_back(t.fetch());
  }
  if (split != nullptr) *split = context.split_of("diffuse");
  return run;
}

TEST(LoopsHybrid, HybridAndBalancedRunsEqualTheHostRunBitForBit) {
  // Large enough that every part runs long enough to be timed, so the splits really move.
  const int nx = 256, ny = 600, chains = 4;
  const HeatRun host = heat("host", {}, chains, nx, ny);
  struct Case {
    const char* spec;
    bool hybrid, each_loop;
  };
  for (const Case& k : {Case{"sim:1:32MiB", true, true}, Case{"sim:2:32MiB:speed=1,4", false, true},
                        Case{"sim:2:32MiB:speed=1,4", true, true}, Case{"sim:2:32MiB:speed=1,4", true, false},
                        Case{"sim:3:32MiB:speed=4,1,2", true, true}}) {
    SCOPED_TRACE(std::string(k.spec) + (k.hybrid ? " hybrid" : "") + (k.each_loop ? "" : " split per chain"));
    std::vector<tl::Share> split;
    const HeatRun r = heat(k.spec, tl::ContextOptions{.hybrid = k.hybrid, .split_each_loop = k.each_loop}, chains, nx, ny,
                           &split);
    for (int c = 0; c < chains; ++c) {
      EXPECT_EQ(r.sums[c], host.sums[c]) << "chain " << c;
      EXPECT_EQ(r.fields[c], host.fields[c]) << "chain " << c;
    }
    // Which way the rows moved depends on timing, which this 2-core VM does not keep steady
    // (the fast device came out smaller about one run in twenty, before and after the kernel
    // engine): LoopsBalance, run alone under the label `timing`, checks where splits settle.
    if (std::string(k.spec) == "sim:2:32MiB:speed=1,4") {
      ASSERT_EQ(split.size(), k.hybrid ? 3u : 2u);
    }
  }
}

TEST(LoopsHybrid, OneSplitPerChainCutsEveryLoopAtTheSameRows) {
  auto devices = tessera::DeviceSet::select("sim:2:32MiB");
  tessera::Executor executor;
  tl::Context context(devices, executor, tl::ContextOptions{.hybrid = true, .balance = false, .split_each_loop = false});
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> a(grid, tl::Shape{.size = {8, 30, 1}, .d_m = {0, -1, 0}, .d_p = {0, 1, 0}}, "a");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  // The chain spans rows -1..30 (32 rows): cuts at 10 and 21. The halo row loop falls in one part.
  tl::par_loop([](tl::Acc<double> v, const int* i) { v(0, 0) = i[1]; }, "fill", grid, tl::Range::of(2, {0, 8, -1, 31}),
               tl::write(a, site), tl::idx());
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) *= 2.0; }, "edge", grid, tl::Range::of(2, {0, 8, 30, 31}), tl::rw(a, site));
  context.execute();
  const std::vector<tl::Share> fill = context.split_of("fill"), edge = context.split_of("edge");
  ASSERT_EQ(fill.size(), 3u);
  ASSERT_EQ(edge.size(), 3u);
  EXPECT_EQ(fill[0].rows, 11);
  EXPECT_EQ(fill[1].rows, 11);
  EXPECT_EQ(fill[2].rows, 10);
  EXPECT_EQ(edge[0].rows + edge[1].rows, 0);  // row 30 lies in the last part
  EXPECT_EQ(edge[2].rows, 1);
  const std::vector<double> v = a.fetch();
  for (int j = -1; j <= 30; ++j) EXPECT_EQ(v[a.index(3, j)], j == 30 ? 60.0 : double(j)) << j;
}

// A loop too light ever to be timed (20 sites of a halo column) follows the cuts of the chain's
// largest loop, not equal parts, so the rows both touch stay with one participant.
TEST(LoopsHybrid, LoopsTooShortToTimeFollowTheLargestLoopsCuts) {
  auto devices = tessera::DeviceSet::select("sim:2:32MiB:speed=1,4");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> a(grid, tl::Shape{.size = {64, 600, 1}}, "a");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  for (int chain = 0; chain < 4; ++chain) {
    tl::par_loop([](tl::Acc<double> v, const int* i) {
      double x = 0.001 * i[0];
      for (int k = 0; k < 100; ++k) x = x * 0.999 + 0.001;
      v(0, 0) = x;
    }, "work", grid, tl::Range::of(2, {0, 64, 0, 600}), tl::write(a, site), tl::idx());
    tl::par_loop([](tl::Acc<double> v) { v(0, 0) = 0.0; }, "edge column", grid, tl::Range::of(2, {0, 1, 290, 310}),
                 tl::rw(a, site));
    context.execute();
  }
  const std::vector<tl::Share> work = context.split_of("work"), edge = context.split_of("edge column");
  ASSERT_EQ(work.size(), 2u);
  ASSERT_EQ(edge.size(), 2u);
  EXPECT_GT(work[1].rows, 2 * work[0].rows) << "the fast device has the larger part";
  // Rows 290..309 cut where "work" is cut (equal parts would be 10 and 10).
  const int below = std::clamp(work[0].rows, 290, 310) - 290;
  EXPECT_EQ(edge[0].rows, below);
  EXPECT_EQ(edge[1].rows, 20 - below);
}

TEST(LoopsHybrid, SplitsNameEveryParticipantAndCoverTheRange) {
  auto devices = tessera::DeviceSet::select("sim:2:32MiB");
  tessera::Executor executor;
  tl::Context context(devices, executor, tl::ContextOptions{.hybrid = true, .balance = false});
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> a(grid, tl::Shape{.size = {8, 30, 1}}, "a");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  EXPECT_TRUE(context.split_of("fill").empty());
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) = 1.0; }, "fill", grid, tl::Range::of(2, {0, 8, 0, 30}),
               tl::write(a, site));
  context.execute();
  const std::vector<tl::Share> split = context.split_of("fill");
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].participant, "host");
  EXPECT_EQ(split[1].participant, "sim:0");
  EXPECT_EQ(split[2].participant, "sim:1");
  for (const tl::Share& s : split) EXPECT_EQ(s.rows, 10);  // balance off: equal parts
  const std::vector<double> v = a.fetch();
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0.0), 8.0 * 30.0);
}

TEST(LoopsHybrid, EverySplitDecisionIsInTheTrace) {
  tessera::Executor executor;
  auto devices = tessera::DeviceSet::select("sim:2:32MiB");
  tl::Context context(devices, executor, tl::ContextOptions{.hybrid = true});
  tl::Block grid(context, 2, "grid");
  tl::Dataset<double> a(grid, tl::Shape{.size = {8, 30, 1}}, "a");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  executor.start_trace();
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) = 1.0; }, "fill", grid, tl::Range::of(2, {0, 8, 0, 30}),
               tl::write(a, site));
  context.execute();
  const tessera::Trace trace = executor.stop_trace();
  std::uint32_t track = ~0u;
  for (std::uint32_t t = 0; t < trace.tracks.size(); ++t)
    if (trace.tracks[t] == "loops balance") track = t;
  ASSERT_NE(track, ~0u) << "no 'loops balance' track";
  bool found = false;
  for (const tessera::TraceEvent& e : trace.events)
    found = found || (e.track == track && e.name == "fill: host 10, sim:0 10, sim:1 10 rows");
  EXPECT_TRUE(found);
}

TEST(LoopsHybrid, PoissonPassesHybridOnSlowAndFastDevices) {
  auto devices = tessera::DeviceSet::select("sim:2:32MiB:speed=1,8");
  tessera::Executor executor;
  tl::Context context(devices, executor, tl::ContextOptions{.hybrid = true});
  const double err = poisson::solve(context, poisson::Problem{});
  EXPECT_LT(poisson::percent_off(err), 0.001) << err;
}

}  // namespace
