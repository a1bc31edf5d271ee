// The step as a tessera::Graph (Listing 12, halo nodes from concurrent_padded_access) gives the
// same state, bit for bit, as the same step made of direct for_each / reduce calls.

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

TENSOR_TEST_ON_DEVICES(GraphStep);

}  // namespace
