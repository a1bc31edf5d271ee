// A state that is not finite is found and named: the field, the first cell, how many more and
// the step. One NaN cell once spread to 380 of 1024 cells while the run exited 0.

#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace {

TEST(CheckFinite, AFiniteStatePassesAndOneNanCellIsNamed) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  euler2d::ShockBubble config;
  config.nx = config.ny = 32;
  euler2d::SolverOptions options;
  options.partitions = tessera::Extent<2>{1, 2};
  euler2d::EulerSolver<double, tessera::Strided> solver(memory, executor, euler2d::shock_bubble(config), options);
  solver.run(3);
  EXPECT_NO_THROW(solver.check_finite());

  std::vector<euler2d::State<double>> cells = solver.gather();
  cells[5 + 32 * 20].energy() = std::numeric_limits<double>::quiet_NaN();
  cells[7 + 32 * 30].density() = std::numeric_limits<double>::infinity();
  solver.state().fill_from(cells.data());
  try {
    solver.check_finite();
    FAIL() << "a NaN cell passed";
  } catch (const tessera::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("at step 3"), std::string::npos) << m;
    EXPECT_NE(m.find("the energy of cell (5, 20) is nan"), std::string::npos) << m;
    EXPECT_NE(m.find("and 1 other cell(s)"), std::string::npos) << m;
  }
}

}  // namespace
