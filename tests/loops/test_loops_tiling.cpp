// Cache-blocking tiling: random chains of 2-D loops (random stencils, ranges, modes, datasets
// read and written in every order) run tiled with several tile heights must leave bit for bit
// what the untiled chain leaves; and tiled Poisson equals untiled Poisson.
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace tl = tessera::loops;

constexpr int kN = 24, kDats = 3;

struct LoopSpec {
  int out;  // dataset written
  int in;   // dataset read through a stencil (may equal out for an rw loop: then offsets are 0)
  bool rw;  // out is read-written (out += ...), else written
  std::vector<tl::Offset> points;
  tl::Range range;
  double c;
};

std::vector<LoopSpec> random_chain(unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<LoopSpec> chain;
  const int loops = 4 + int(rng() % 12);
  for (int l = 0; l < loops; ++l) {
    LoopSpec s;
    s.out = int(rng() % kDats);
    s.in = int(rng() % kDats);
    s.rw = rng() % 3 == 0;
    const int reach = s.in == s.out ? 0 : int(rng() % 3);  // a loop never reads neighbours of what it writes
    s.points = {{0, 0, 0}};
    for (int p = 0; p < 3; ++p)
      s.points.push_back({int(rng() % (2 * reach + 1)) - reach, int(rng() % (2 * reach + 1)) - reach, 0});
    const int y0 = int(rng() % 6), y1 = kN - int(rng() % 6), x0 = int(rng() % 4);
    s.range = tl::Range::of(2, {x0, kN, y0, y1});
    s.c = 0.25 + 0.01 * l;
    chain.push_back(s);
  }
  return chain;
}

std::vector<std::vector<double>> run_chain(const std::vector<LoopSpec>& chain, const tl::ContextOptions& options,
                                           std::size_t* tiles = nullptr, const char* spec = "host") {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block block(context, 2, "grid");
  std::vector<std::unique_ptr<tl::Dataset<double>>> dats;
  for (int d = 0; d < kDats; ++d) {
    dats.push_back(std::make_unique<tl::Dataset<double>>(
        block, tl::Shape{.size = {kN, kN, 1}, .d_m = {-2, -2, 0}, .d_p = {2, 2, 0}}, "d" + std::to_string(d)));
    std::vector<double> init(dats.back()->elements());
    for (std::size_t i = 0; i < init.size(); ++i) init[i] = double((i * 7 + d * 13) % 29) / 29.0;
    dats.back()->assign(init);
  }
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  for (std::size_t l = 0; l < chain.size(); ++l) {
    const LoopSpec& s = chain[l];
    const tl::Stencil st(2, s.points, "s" + std::to_string(l));
    auto sum4 = [](const tl::Acc<const double>& v, const std::vector<tl::Offset>& p) {
      return v(p[0][0], p[0][1]) + v(p[1][0], p[1][1]) + v(p[2][0], p[2][1]) + v(p[3][0], p[3][1]);
    };
    if (s.in == s.out) {
      tl::par_loop([c = s.c](tl::Acc<double> v) { v(0, 0) = c * v(0, 0) + 1.0; }, "self", block, s.range,
                   tl::rw(*dats[s.out], site));
    } else if (s.rw) {
      tl::par_loop(
          [p = s.points, c = s.c, sum4](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) += c * sum4(v, p); },
          "add", block, s.range, tl::rw(*dats[s.out], site), tl::read(*dats[s.in], st));
    } else {
      tl::par_loop(
          [p = s.points, c = s.c, sum4](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) = c * sum4(v, p); },
          "set", block, s.range, tl::write(*dats[s.out], site), tl::read(*dats[s.in], st));
    }
  }
  context.execute();
  if (tiles) *tiles = context.last_tiles();
  std::vector<std::vector<double>> out;
  for (auto& d : dats) out.push_back(d->fetch());
  return out;
}

TEST(LoopsTiling, RandomChainsTiledEqualUntiledBitForBit) {
  for (unsigned seed = 1; seed <= 25; ++seed) {
    const auto chain = random_chain(seed);
    const auto want = run_chain(chain, {});
    for (int rows : {1, 3, 7, 0}) {
      std::size_t tiles = 0;
      const auto got = run_chain(chain, {.tiled = true, .tile_rows = rows, .tile_bytes = 16 * 1024}, &tiles);
      EXPECT_GE(tiles, rows == 0 ? 1u : 3u) << "seed " << seed << " rows " << rows;
      for (int d = 0; d < kDats; ++d)
        ASSERT_EQ(got[d], want[d]) << "seed " << seed << " tile rows " << rows << " d" << d;
    }
  }
}

// Hybrid, the host tiles its part of the chain and the devices run theirs loop by loop.
TEST(LoopsTiling, RandomChainsTiledInTheHostsHybridPartEqualUntiledBitForBit) {
  for (unsigned seed = 1; seed <= 15; ++seed) {
    const auto chain = random_chain(seed);
    const auto want = run_chain(chain, {});
    for (int rows : {1, 2})
      for (bool each_loop : {true, false}) {
        std::size_t tiles = 0;
        const auto got = run_chain(
            chain, {.tiled = true, .tile_rows = rows, .hybrid = true, .balance = false, .split_each_loop = each_loop},
            &tiles, "sim:2:16MiB");
        EXPECT_GE(tiles, 1u) << "seed " << seed << " rows " << rows;
        for (int d = 0; d < kDats; ++d)
          ASSERT_EQ(got[d], want[d]) << "seed " << seed << " tile rows " << rows << (each_loop ? "" : " per chain")
                                     << " d" << d;
      }
  }
}

// OPS's tiled hybrid scheme: one overlapped tile per participant over the whole chain (three
// participants: the host and two devices, or three devices), the rows along each cut computed on
// both sides.
TEST(LoopsOverlapped, RandomChainsInOverlappedTilesEqualThePlainChainBitForBit) {
  for (unsigned seed = 1; seed <= 25; ++seed) {
    const auto chain = random_chain(seed);
    const auto want = run_chain(chain, {});
    for (const char* spec : {"sim:2:16MiB", "sim:3:16MiB"}) {
      std::size_t tiles = 0;
      const bool hybrid = std::string(spec) == "sim:2:16MiB";
      const auto got = run_chain(chain, {.hybrid = hybrid, .balance = false, .overlapped_tiles = true}, &tiles, spec);
      EXPECT_EQ(tiles, 3u) << "seed " << seed << " on " << spec;
      for (int d = 0; d < kDats; ++d) ASSERT_EQ(got[d], want[d]) << "seed " << seed << " on " << spec << " d" << d;
    }
  }
}

namespace {

struct Transfers {
  std::vector<double> field;
  std::size_t copies = 0, tiles = 0;
};

// `steps` Jacobi steps (a 5-point loop and a copy each) as one chain, after a first chain that
// places the data; the copies counted are the second chain's.
Transfers jacobi_chain(const tl::ContextOptions& options, const char* spec, int steps) {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const int n = 96;
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> u(grid, shape, "u"), v(grid, shape, "v");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil five(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "5pt");
  tl::par_loop([](tl::Acc<double> a, const int* i) { a(0, 0) = double((i[0] * 5 + i[1] * 3) % 11); }, "init", grid,
               tl::Range::of(2, {-1, n + 1, -1, n + 1}), tl::write(u, site), tl::idx());
  auto record = [&] {
    for (int s = 0; s < steps; ++s) {
      tl::par_loop([](tl::Acc<double> o,
                      tl::Acc<const double> i) { o(0, 0) = 0.25 * (i(1, 0) + i(-1, 0) + i(0, 1) + i(0, -1)); },
                   "jacobi", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(v, site), tl::read(u, five));
      tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> i) { o(0, 0) = i(0, 0); }, "copy", grid,
                   tl::Range::of(2, {0, n, 0, n}), tl::write(u, site), tl::read(v, site));
    }
  };
  record();
  context.execute();
  const std::size_t before = context.memory().stats().copies;
  record();
  context.execute();
  Transfers out;
  out.copies = context.memory().stats().copies - before;
  out.tiles = context.last_tiles();
  out.field = u.fetch();
  return out;
}

}  // namespace

TEST(LoopsOverlapped, AJacobiChainExchangesOncePerChainNotBetweenLoops) {
  const Transfers want = jacobi_chain({}, "host", 8);
  const Transfers per_loop = jacobi_chain({.hybrid = true, .balance = false}, "sim:1:16MiB", 8);
  const Transfers tiled = jacobi_chain({.hybrid = true, .balance = false, .overlapped_tiles = true}, "sim:1:16MiB", 8);
  EXPECT_EQ(per_loop.field, want.field);
  EXPECT_EQ(tiled.field, want.field);
  EXPECT_EQ(tiled.tiles, 2u);
  // Per loop the halo rows cross the cut before every Jacobi loop (both ways); overlapped tiles
  // take their inputs once, before the chain: a strip of u and of v each way at most.
  EXPECT_LE(tiled.copies, 4u);
  EXPECT_GE(per_loop.copies, 16u);
}

// A loop that reduces cannot be computed twice along a cut: where a later loop would need it
// past the participant's part, the chain runs per loop, with the same bits.
TEST(LoopsOverlapped, AReducingLoopALaterLoopReadsAcrossTheCutRunsPerLoop) {
  auto run = [](const tl::ContextOptions& options, const char* spec, std::size_t* tiles) {
    auto devices = tessera::DeviceSet::select(spec);
    tessera::Executor executor;
    tl::Context context(devices, executor, options);
    tl::Block grid(context, 2, "grid");
    const int n = 40;
    tl::Dataset<double> a(grid, {.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "a");
    tl::Dataset<double> b(grid, {.size = {n, n, 1}}, "b");
    const tl::Stencil site(2, {{0, 0, 0}}, "site");
    const tl::Stencil five(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "5pt");
    tl::Reduction<double> sum(context, tl::ReduceOp::inc, "sum");
    tl::par_loop(
        [](tl::Acc<double> v, const int* i, double& s) {
          v(0, 0) = 0.5 * i[0] + 0.25 * i[1];
          s += v(0, 0);
        },
        "fill and sum", grid, tl::Range::of(2, {-1, n + 1, -1, n + 1}), tl::write(a, site), tl::idx(), tl::reduce(sum));
    tl::par_loop([](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) = v(1, 0) + v(0, 1) - v(0, -1); }, "mix",
                 grid, tl::Range::of(2, {0, n, 0, n}), tl::write(b, site), tl::read(a, five));
    const double total = sum.get();
    *tiles = context.last_tiles();
    return std::make_pair(total, b.fetch());
  };
  std::size_t tiles = 0;
  const auto want = run({}, "host", &tiles);
  const auto got = run({.hybrid = true, .balance = false, .overlapped_tiles = true}, "sim:2:16MiB", &tiles);
  EXPECT_EQ(got, want);
  EXPECT_EQ(tiles, 0u);
}

TEST(LoopsOverlapped, PoissonPassesInOverlappedTilesOnUnequalDevices) {
  auto host = tessera::DeviceSet::select("host");
  auto devices = tessera::DeviceSet::select("sim:2:64MiB:speed=1,4");
  tessera::Executor executor;
  const poisson::Problem p{.nx = 61, .ny = 67, .iterations = 15};
  tl::Context plain(host, executor);
  // DOC overlapped begin
  tl::Context overlapped(devices, executor, {.hybrid = true, .overlapped_tiles = true});
  EXPECT_EQ(poisson::solve(overlapped, p), poisson::solve(plain, p));
  // DOC overlapped end
  tl::Context defaults(devices, executor, {.hybrid = true, .overlapped_tiles = true});
  EXPECT_LT(poisson::percent_off(poisson::solve(defaults, poisson::Problem{})), 0.001);
}

TEST(LoopsTiling, PoissonTiledEqualsUntiled) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  const poisson::Problem p{.nx = 61, .ny = 67, .iterations = 15};
  tl::Context plain(devices, executor);
  tl::Context tiled(devices, executor, {.tiled = true, .tile_rows = 4});
  EXPECT_EQ(poisson::solve(tiled, p), poisson::solve(plain, p));
  EXPECT_GT(tiled.last_tiles(), 1u);  // the error loop's chain
  tl::Context tiled_default(devices, executor, {.tiled = true});
  const double err = poisson::solve(tiled_default, poisson::Problem{});
  EXPECT_LT(poisson::percent_off(err), 0.001);
}

TEST(LoopsTiling, ANegativeTileHeightIsAnError) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  try {
    tl::Context c(devices, executor, {.tiled = true, .tile_rows = -2});
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile_rows -2"), std::string::npos) << e.what();
  }
}

TEST(LoopsOverlapped, OverlappedTilesWithoutAcceleratorsIsAnError) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  try {
    tl::Context c(devices, executor, {.hybrid = true, .overlapped_tiles = true});
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("overlapped_tiles needs accelerators"), std::string::npos) << e.what();
  }
}

}  // namespace
