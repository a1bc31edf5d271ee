#pragma once
// Runs of the CloverLeaf solver step by step, and their comparison: the same field summaries to
// 1e-12 relative and bit for bit, the same time steps and controls. Shared by test_cloverleaf and
// test_cloverleaf_bm.
#include "cloverleaf.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace cloverleaf_runs {

/// clover_bm_short.in (UK-MAC/CloverLeaf_ref InputDecks; apps/cloverleaf/decks) with `cells` x
/// `cells` cells instead of 960 x 960, ending after `steps` steps.
inline std::string bm_short_deck(int cells, int steps) {
  return "*clover\n"
         " state 1 density=0.2 energy=1.0\n"
         " state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0\n"
         " x_cells=" + std::to_string(cells) + "\n y_cells=" + std::to_string(cells) + "\n"
         " xmin=0.0\n ymin=0.0\n xmax=10.0\n ymax=10.0\n"
         " initial_timestep=0.04\n timestep_rise=1.5\n max_timestep=0.04\n"
         " end_step=" + std::to_string(steps) + "\n*endclover\n";
}

struct Trace {
  std::vector<cloverleaf::Summary> summaries;  // step 0, then after every step
  std::vector<cloverleaf::StepInfo> steps;
};

inline Trace run(const std::string& deck_text, const std::string& devices, const tessera::loops::ContextOptions& options = {}) {
  auto set = tessera::DeviceSet::select(devices);
  tessera::Executor executor;
  tessera::loops::Context context(set, executor, options);
  cloverleaf::Solver solver(context, cloverleaf::parse_deck_text(deck_text, "test deck"));
  Trace r;
  r.summaries.push_back(solver.field_summary());
  while (!solver.finished()) {
    r.steps.push_back(solver.advance());
    r.summaries.push_back(solver.field_summary());
  }
  return r;
}

inline void expect_close(double a, double b, const char* what, int step) {
  EXPECT_LE(std::fabs(a - b), 1e-12 * std::max(std::fabs(a), std::fabs(b))) << what << " at step " << step;
}

// Same summaries and steps to 1e-12 relative, and bit for bit: every reduction sums row by row
// and then the rows in order, whatever the workers, devices or tiles.
inline void expect_same(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.summaries.size(), b.summaries.size());
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t s = 0; s < a.steps.size(); ++s) {
    EXPECT_EQ(a.steps[s].dt, b.steps[s].dt) << "step " << a.steps[s].step;
    EXPECT_STREQ(a.steps[s].control, b.steps[s].control) << "step " << a.steps[s].step;
  }
  for (std::size_t s = 0; s < a.summaries.size(); ++s) {
    const auto &x = a.summaries[s], &y = b.summaries[s];
    expect_close(x.volume, y.volume, "volume", x.step);
    expect_close(x.mass, y.mass, "mass", x.step);
    expect_close(x.pressure_volume, y.pressure_volume, "pressure", x.step);
    expect_close(x.internal_energy, y.internal_energy, "internal energy", x.step);
    expect_close(x.kinetic_energy, y.kinetic_energy, "kinetic energy", x.step);
    EXPECT_EQ(x.volume, y.volume) << x.step;
    EXPECT_EQ(x.mass, y.mass) << x.step;
    EXPECT_EQ(x.pressure_volume, y.pressure_volume) << x.step;
    EXPECT_EQ(x.internal_energy, y.internal_energy) << x.step;
    EXPECT_EQ(x.kinetic_energy, y.kinetic_energy) << x.step;
  }
}

}  // namespace cloverleaf_runs
