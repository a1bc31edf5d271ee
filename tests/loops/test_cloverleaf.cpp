// CloverLeaf 2-D on the loops front end (apps/cloverleaf): the step-0 field summary of test
// problem 1 is CloverLeaf's, test problem 1 passes CloverLeaf's final kinetic-energy check, and
// a short run of a reduced clover_bm_short problem gives the same field summaries and time steps
// on the host, tiled on the host and on four simulated devices. Decks with malformed values are
// tessera::Errors that name the line and the key.
#include "cloverleaf.hpp"
#include "cloverleaf_runs.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using cloverleaf_runs::expect_same;
using cloverleaf_runs::run;
using cloverleaf_runs::Trace;

const char* const test_problem_1 = cloverleaf::default_deck_text;

const std::string small_bm = cloverleaf_runs::bm_short_deck(96, 5);

TEST(CloverLeaf, TestProblem1StartsWithCloverLeafsFieldSummary) {
  auto set = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tessera::loops::Context context(set, executor);
  cloverleaf::Solver solver(context, cloverleaf::parse_deck_text(test_problem_1));
  const cloverleaf::Summary s = solver.field_summary();
  // The step-0 row of CloverLeaf's output for this deck (UoB-HPC/SimEng clover.out, recorded in
  // ../shared/reference/cloverleaf/expected.json "initial_field_summary_step0").
  EXPECT_NEAR(s.volume, 20.0, 1e-12 * 20.0);
  EXPECT_NEAR(s.mass, 12.0, 1e-12 * 12.0);
  EXPECT_NEAR(s.density(), 0.6, 1e-12 * 0.6);
  EXPECT_NEAR(s.pressure(), 0.54, 1e-12 * 0.54);
  EXPECT_NEAR(s.internal_energy, 27.0, 1e-12 * 27.0);
  EXPECT_EQ(s.kinetic_energy, 0.0);
  EXPECT_EQ(s.step, 0);
}

TEST(CloverLeaf, TestProblem1PassesOnHostTiledAndSimulatedDevices) {
  const Trace host = run(test_problem_1, "host");
  // CloverLeaf's check: |100 KE / 1.82280367310258 - 100| < 0.001 (field_summary.f90).
  const double ke = host.summaries.back().kinetic_energy;
  EXPECT_LT(std::fabs(100.0 * (ke / cloverleaf::expected_kinetic_energy(1)) - 100.0), 0.001) << ke;
  EXPECT_NEAR(host.summaries.back().time, 3.0, 1e-9);
  expect_same(host, run(test_problem_1, "sim:4:64MiB"));
  expect_same(host, run(test_problem_1, "host", {.tiled = true, .tile_rows = 1}));
  // Overlapped tiles on a grid of 2 rows of cells: a part may own no row of a cell field (the
  // node fields have one more); such chains run per loop.
  // The slow last device is soon left with the top rows alone.
  expect_same(host, run(test_problem_1, "sim:2:64MiB:speed=16,1",
                        {.hybrid = true, .balance_threshold = 0.0, .overlapped_tiles = true}));
}

TEST(CloverLeaf, ReducedBenchmarkAgreesOnHostTiledAndFourSimulatedDevices) {
  const Trace host = run(small_bm, "host");
  ASSERT_EQ(host.steps.size(), 5u);
  EXPECT_GT(host.summaries.back().kinetic_energy, 0.0);
  // Mass is conserved to round-off.
  EXPECT_NEAR(host.summaries.back().mass, host.summaries.front().mass, 1e-12 * host.summaries.front().mass);
  expect_same(host, run(small_bm, "host", {.tiled = true, .tile_rows = 8}));
  expect_same(host, run(small_bm, "host", {.tiled = true}));
  expect_same(host, run(small_bm, "sim:4:64MiB"));
  expect_same(host, run(small_bm, "sim:2:64MiB:speed=1,4", {.hybrid = true}));
  expect_same(host, run(small_bm, "sim:2:64MiB:speed=1,4", {.tiled = true, .tile_rows = 8, .hybrid = true}));
  expect_same(host, run(small_bm, "sim:2:64MiB:speed=1,4", {.hybrid = true, .overlapped_tiles = true}));
}

TEST(CloverLeaf, GeneratesCircleAndPointStatesAsCloverLeafDoes) {
  // A 10 x 10 mesh of unit cells; state 2 a circle of radius 2.5 about (5, 5), state 3 a point.
  auto set = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tessera::loops::Context context(set, executor);
  cloverleaf::Solver solver(context, cloverleaf::parse_deck_text(R"(*clover
 state 1 density=0.2 energy=1.0
 state 2 density=1.0 energy=2.5 geometry=circle xmin=5.0 ymin=5.0 radius=2.5
 state 3 density=3.0 energy=1.0 geometry=point xmin=2.0 ymin=2.0
 x_cells=10 y_cells=10 xmax=10.0 ymax=10.0
*endclover
)"));
  // CloverLeaf moves a state's xmin and ymin (the circle's centre) a hundredth of a cell inwards,
  // and tests the cell centre's distance. The point state then matches no vertex exactly, so it
  // sets nothing, as in CloverLeaf.
  int inside = 0;
  for (int j = 0; j < 10; ++j)
    for (int i = 0; i < 10; ++i) {
      const double x = i + 0.5 - 5.01, y = j + 0.5 - 5.01;
      if (std::sqrt(x * x + y * y) <= 2.5) ++inside;
    }
  ASSERT_GT(inside, 0);
  const cloverleaf::Summary s = solver.field_summary();
  EXPECT_NEAR(s.mass, 1.0 * inside + 0.2 * (100 - inside), 1e-12);
  EXPECT_NEAR(s.internal_energy, 2.5 * inside + 0.2 * (100 - inside), 1e-12);
}

TEST(CloverLeafDeck, ReadsKeysStatesAndDefaults) {
  const cloverleaf::Deck d = cloverleaf::parse_deck_text(R"(ignored before the section
*clover
 state 1 density=0.2 energy=1.0
 state 2 density=1.0 energy=2.5 geometry=circle xmin=5.0 ymin=5.0 radius=2.0 xvel=0.5
 x_cells=20 y_cells=10   ! a comment
 tiles_per_chunk=4
 profiler_on
 end_step 7
 test_problem 2
*endclover
)");
  EXPECT_EQ(d.x_cells, 20);
  EXPECT_EQ(d.y_cells, 10);
  EXPECT_EQ(d.end_step, 7);
  EXPECT_EQ(d.test_problem, 2);
  EXPECT_EQ(d.end_time, 10.0);  // CloverLeaf's default
  EXPECT_EQ(d.dtinit, 0.1);
  ASSERT_EQ(d.states.size(), 2u);
  EXPECT_EQ(d.states[1].geometry, cloverleaf::Geometry::circle);
  EXPECT_EQ(d.states[1].radius, 2.0);
  EXPECT_EQ(d.states[1].xvel, 0.5);
  EXPECT_DOUBLE_EQ(d.states[1].xmin, 5.0 + 5.0 / 100.0);  // moved a hundredth of a cell (dx = 5)
}

std::string error_of(const std::string& text) {
  try {
    cloverleaf::parse_deck_text(text, "bad.in");
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CloverLeafDeck, MalformedValuesAreErrorsNamingTheLineAndKey) {
  EXPECT_EQ(error_of("*clover\n state 1 density=0.2 energy=1.0\n x_cells=1O\n*endclover\n"),
            "deck 'bad.in' line 3: x_cells expects an integer, got '1O'");
  EXPECT_EQ(error_of("*clover\n state 1 density=0.2 energy=1.0\n end_time=3.0.1\n*endclover\n"),
            "deck 'bad.in' line 3: end_time expects a number, got '3.0.1'");
  EXPECT_EQ(error_of("*clover\n state 1 density=heavy energy=1.0\n*endclover\n"),
            "deck 'bad.in' line 2: density expects a number, got 'heavy'");
  EXPECT_EQ(error_of("*clover\n state 1 density=0.2 energy=1.0\n x_cells\n*endclover\n"),
            "deck 'bad.in' line 3: x_cells needs a value");
  EXPECT_EQ(error_of("*clover\n state 1 density=0.2\n state 1 density=0.3\n*endclover\n"),
            "deck 'bad.in' line 3: state 1 defined twice");
  EXPECT_EQ(error_of("*clover\n state 2 density=0.2\n*endclover\n"), "deck 'bad.in': state 1 is not defined");
  EXPECT_EQ(error_of("*clover\n x_cells=4\n*endclover\n"), "deck 'bad.in': no states defined");
}

}  // namespace
