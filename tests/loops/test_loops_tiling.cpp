// Cache-blocking tiling: random chains of 2-D loops (random stencils, ranges, modes, datasets
// read and written in every order) run tiled with several tile heights must leave bit for bit
// what the untiled chain leaves; and tiled Poisson equals untiled Poisson.
#include "poisson.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

namespace tl = tessera::loops;

constexpr int kN = 24, kDats = 3;

struct LoopSpec {
  int out;               // dataset written
  int in;                // dataset read through a stencil (may equal out for an rw loop: then offsets are 0)
  bool rw;               // out is read-written (out += ...), else written
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
    for (int p = 0; p < 3; ++p) s.points.push_back({int(rng() % (2 * reach + 1)) - reach, int(rng() % (2 * reach + 1)) - reach, 0});
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
      tl::par_loop([p = s.points, c = s.c, sum4](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) += c * sum4(v, p); },
                   "add", block, s.range, tl::rw(*dats[s.out], site), tl::read(*dats[s.in], st));
    } else {
      tl::par_loop([p = s.points, c = s.c, sum4](tl::Acc<double> o, tl::Acc<const double> v) { o(0, 0) = c * sum4(v, p); },
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
      for (int d = 0; d < kDats; ++d) ASSERT_EQ(got[d], want[d]) << "seed " << seed << " tile rows " << rows << " d" << d;
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
        const auto got = run_chain(chain,
                                   {.tiled = true, .tile_rows = rows, .hybrid = true, .balance = false,
                                    .split_each_loop = each_loop},
                                   &tiles, "sim:2:16MiB");
        EXPECT_GE(tiles, 1u) << "seed " << seed << " rows " << rows;
        for (int d = 0; d < kDats; ++d)
          ASSERT_EQ(got[d], want[d]) << "seed " << seed << " tile rows " << rows << (each_loop ? "" : " per chain") << " d" << d;
      }
  }
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

}  // namespace
