// The step as a tessera::Graph (Listing 12, halo nodes from concurrent_padded_access) gives the
// same state, bit for bit, as the same step made of direct for_each / reduce calls; and the
// largest wavespeed the y sweep reduces as it writes is, bit for bit, a reduction of the state
// it wrote, in every layout, so dt is what a separate reduction would give.

#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include "../../../tests/tensor/tensor_test_support.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace {

euler2d::Problem problem(euler2d::Boundary boundary) {
  euler2d::ShockBubble config;
  config.nx = 40;
  config.ny = 24;
  config.boundary = boundary;
  return euler2d::shock_bubble(config);
}

class GraphStep : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphStep, GraphAndDirectCallsGiveTheSameState) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  for (euler2d::Boundary boundary : {euler2d::Boundary::transmissive, euler2d::Boundary::periodic}) {
    euler2d::SolverOptions options;
    options.partitions = tessera::Extent<2>{1, 4};
    euler2d::EulerSolver<double, tessera::Strided> direct(memory, executor, problem(boundary), options);
    euler2d::EulerSolver<double, tessera::Strided> graphed(memory, executor, problem(boundary), options);
    const std::size_t steps = 10;
    direct.run(steps);
    tessera::Graph g("euler step");
    graphed.add_step(g);
    g.run_n(executor, steps).get();
    EXPECT_EQ(graphed.steps(), steps);
    EXPECT_EQ(graphed.time(), direct.time());
    const std::vector<euler2d::State<double>> a = direct.gather(), b = graphed.gather();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])), 0)
        << (boundary == euler2d::Boundary::periodic ? "periodic" : "transmissive");
    memory.synchronize();
  }
}

TEST_P(GraphStep, RunUntilStopsAtTFinal) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  euler2d::Problem p = problem(euler2d::Boundary::transmissive);
  p.t_final = 0.01;  // about 10 steps, the last one shortened to land on t_final
  euler2d::EulerSolver<double, tessera::Strided> direct(memory, executor, p);
  euler2d::EulerSolver<double, tessera::Strided> graphed(memory, executor, p);
  direct.run();
  tessera::Graph g("euler step");
  graphed.add_step(g);
  g.run_until(executor, [&] { return graphed.finished(); }).get();
  EXPECT_EQ(graphed.time(), 0.01);
  EXPECT_EQ(graphed.steps(), direct.steps());
  const std::vector<euler2d::State<double>> a = direct.gather(), b = graphed.gather();
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])), 0);
  memory.synchronize();
}

// Several steps a run of the graph: on a device nothing goes through the host between them.
// Runs that overshoot t_final take steps of dt = 0, which must leave the state as it is.
TEST_P(GraphStep, ManyStepsARunGiveTheSameStateAndStopAtTFinal) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  euler2d::Problem p = problem(euler2d::Boundary::transmissive);
  p.t_final = 0.03;
  euler2d::EulerSolver<double, tessera::Strided> direct(memory, executor, p);
  direct.run();
  ASSERT_GT(direct.steps(), 5u);
  ASSERT_NE(direct.steps() % 4, 0u) << "the runs of 4 steps are to overshoot t_final";
  for (const bool capture : {false, true}) {
    euler2d::EulerSolver<double, tessera::Strided> graphed(memory, executor, p);
    tessera::Graph g("euler steps");
    graphed.add_steps(g, 4);
    if (capture) g.capture();
    std::size_t runs = 0;
    g.run_until(executor, [&] { return graphed.finished() || (runs++, false); }).get();
    EXPECT_EQ(runs, (direct.steps() + 3) / 4);
    EXPECT_EQ(graphed.time(), 0.03);
    EXPECT_EQ(graphed.steps(), direct.steps());
    EXPECT_EQ(graphed.dt(), 0.0);  // the last run's last step was past t_final
    const std::vector<euler2d::State<double>> a = direct.gather(), b = graphed.gather();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])), 0) << (capture ? "captured" : "");
    EXPECT_EQ(graphed.max_wavespeed(), direct.max_wavespeed());
    if (capture && devices.num_accelerators() > 0) {
      // Recorded once and replayed from then on, on several devices too (dt, written on one,
      // is copied to the others inside the recording), with the host reading the clock between
      // runs: more runs (of dt = 0 steps) record nothing again.
      EXPECT_EQ(g.pass(0).capture_refusal(), "") << GetParam();
      const std::size_t recorded = g.pass(0).recordings();
      EXPECT_GT(recorded, 0u) << GetParam();
      g.run_n(executor, 2).get();
      EXPECT_EQ(graphed.time(), 0.03);
      EXPECT_EQ(g.pass(0).recordings(), recorded) << GetParam();
    }
  }
  memory.synchronize();
}

// A state that has lost positivity (negative pressure) stops the clock: the step that meets it
// takes dt = 0 and the host hears of it as a tessera::Error naming the wavespeed, t and step.
TEST_P(GraphStep, AStateWithoutPositivityStopsWithAnError) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  euler2d::EulerSolver<double, tessera::Strided> solver(memory, executor, problem(euler2d::Boundary::transmissive));
  solver.run(2);
  std::vector<euler2d::State<double>> cells = solver.gather();
  cells[37].energy() = -1.0;  // negative pressure: no sound speed
  solver.state().fill_from(cells.data());
  solver.refresh_wavespeed();
  const double t = solver.time();
  auto expect_error = [&](const std::string& what, auto&& run) {
    try {
      run();
      ADD_FAILURE() << what << ": no error";
    } catch (const tessera::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("lost positivity"), std::string::npos) << what << ": " << m;
      EXPECT_NE(m.find("nan at t = "), std::string::npos) << what << ": " << m;
      EXPECT_NE(m.find("(step 2)"), std::string::npos) << what << ": " << m;
    }
  };
  tessera::Graph g("euler steps");
  solver.add_steps(g, 3);
  expect_error("graph", [&] { g.run_until(executor, [&] { return solver.finished(); }).get(); });
  EXPECT_EQ(solver.time(), t) << "the failed steps kept the clock";
  EXPECT_EQ(solver.steps(), 2u);
  expect_error("step()", [&] { solver.step(); });
  memory.synchronize();
}

template <tessera::Layout L>
void check_wavespeed_kept(const std::string& devices_spec) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(devices_spec);
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  euler2d::SolverOptions options;
  options.partitions = tessera::Extent<2>{1, 3};
  euler2d::EulerSolver<double, L> solver(memory, executor, problem(euler2d::Boundary::transmissive), options);
  const euler2d::Wavespeed<double> map{solver.gas()};
  auto fresh = [&] {
    tessera::ReductionResult<double> r;
    tessera::reduce(executor, solver.state(), r, tessera::Max{}, map);
    return r.value();
  };
  EXPECT_EQ(solver.max_wavespeed(), fresh()) << L::name << ": after the constructor";
  tessera::Graph g("euler step");
  solver.add_step(g);
  for (int k = 0; k < 4; ++k) {
    g.run(executor).get();
    EXPECT_EQ(solver.max_wavespeed(), fresh()) << L::name << ": after graph step " << k;
    solver.step();
    EXPECT_EQ(solver.max_wavespeed(), fresh()) << L::name << ": after direct step " << k;
  }
  // A state written from outside: refresh_wavespeed() (restore_clock() calls it) picks it up.
  std::vector<euler2d::State<double>> cells = solver.gather();
  for (auto& c : cells) c.energy() = 4.0 * c.energy();  // pressure up more than fourfold: faster sound
  solver.state().fill_from(cells.data());
  const double before = solver.max_wavespeed();
  solver.refresh_wavespeed();
  EXPECT_EQ(solver.max_wavespeed(), fresh()) << L::name;
  EXPECT_GT(solver.max_wavespeed(), before) << L::name;
  solver.state().fill_from(solver.gather().data());
  solver.restore_clock(solver.time(), solver.steps());
  EXPECT_EQ(solver.max_wavespeed(), fresh()) << L::name << ": after restore_clock";
  memory.synchronize();
}

TEST_P(GraphStep, TheYSweepKeepsTheLargestWavespeedOfTheState) {
  check_wavespeed_kept<tessera::Strided>(GetParam());
  check_wavespeed_kept<tessera::Contiguous>(GetParam());
  check_wavespeed_kept<tessera::Tiled<8>>(GetParam());
}

TENSOR_TEST_ON_DEVICES(GraphStep);

}  // namespace
