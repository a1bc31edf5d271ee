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

// clover_bm_short.in (UK-MAC/CloverLeaf_ref InputDecks; apps/cloverleaf/decks) with end_step 3.
const char* const bm_short_3_steps = R"(*clover
 state 1 density=0.2 energy=1.0
 state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
 x_cells=960
 y_cells=960
 xmin=0.0
 ymin=0.0
 xmax=10.0
 ymax=10.0
 initial_timestep=0.04
 timestep_rise=1.5
 max_timestep=0.04
 end_step=3
*endclover
)";

TEST(CloverLeafBenchmarkDeck, ShortRunAgreesOnHostTiledFourDevicesAndHybrid) {
  const Trace host = run(bm_short_3_steps, "host");
  ASSERT_EQ(host.steps.size(), 3u);
  expect_same(host, run(bm_short_3_steps, "host", {.tiled = true, .tile_rows = 96}));
  expect_same(host, run(bm_short_3_steps, "sim:4:256MiB"));
  expect_same(host, run(bm_short_3_steps, "sim:2:512MiB:speed=1,4", {.hybrid = true}));
}

}  // namespace
