// A short run of CloverLeaf's 960 x 960 benchmark deck (clover_bm_short, 3 of its 87 steps)
// gives the same field summaries and time steps, to 1e-12 and bit for bit, on the host, tiled,
// on four simulated devices and hybrid (CPU workers beside two unequal devices). Labelled heavy:
// full-size meshes, run once in CI (not under the sanitizers).
#include "cloverleaf_runs.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using cloverleaf_runs::expect_same;
using cloverleaf_runs::run;
using cloverleaf_runs::Trace;

const std::string bm_short_3_steps = cloverleaf_runs::bm_short_deck(960, 3);

TEST(CloverLeafBenchmarkDeck, ShortRunAgreesOnHostTiledFourDevicesAndHybrid) {
  const Trace host = run(bm_short_3_steps, "host");
  ASSERT_EQ(host.steps.size(), 3u);
  expect_same(host, run(bm_short_3_steps, "host", {.tiled = true, .tile_rows = 96}));
  expect_same(host, run(bm_short_3_steps, "sim:4:256MiB"));
  expect_same(host, run(bm_short_3_steps, "sim:2:512MiB:speed=1,4", {.hybrid = true}));
}

}  // namespace
