// The solver's invariants and its agreement across targets and front ends:
// - mass and the order parameter are conserved to round-off over 120 steps, and total momentum
//   stays at round-off with periodic boundaries (fluid + walls with walls);
// - host, sim:1 and sim:4 targets give the same bits for a whole run;
// - the targetDP collision and the Tensor/Record/for_each collision give the same bits, on the
//   host, on sim:1 and partitioned over sim:4;
// - a lattice that does not fit the target is a clear error.

#include "solver.hpp"
#include "statistics.hpp"
#include "tensor_collision.hpp"

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

namespace {

lb::Parameters small_run(int n, bool walls) {
  std::string deck = "size " + std::to_string(n) + "_" + std::to_string(n) + "_" + std::to_string(n) +
                     "\nviscosity 0.00625\nA -0.00625\nB 0.00625\nK 0.004\nmobility 3.75\nrandom_seed 8361235\n"
                     "free_energy symmetric_lb\nphi_initialisation spinodal\n";
  deck += walls ? "boundary_walls 1_1_1\nperiodicity 0_0_0\nfd_gradient_calculation 3d_27pt_solid\n"
                : "periodicity 1_1_1\nfd_gradient_calculation 3d_27pt_fluid\n";
  return lb::parse_input(deck, "small.inp");
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class LbTargets : public ::testing::TestWithParam<bool> {
protected:
  void TearDown() override { targetFinalize(); }
};

TEST_P(LbTargets, MassAndOrderParameterAreConservedAndMomentumStaysAtRoundOff) {
  const bool walls = GetParam();
  targetInit("host");
  const lb::Parameters p = small_run(16, walls);
  lb::Solver solver(p);
  const lb::Statistics start = lb::compute_statistics(solver.snapshot(), solver.geometry(), p);
  for (int t = 0; t < 120; ++t) solver.step();
  const lb::Statistics end = lb::compute_statistics(solver.snapshot(), solver.geometry(), p);
  EXPECT_NEAR(end.rho.total, start.rho.total, 1e-12 * start.rho.total);
  EXPECT_NEAR(end.phi.total, start.phi.total, 1e-11);
  // The run did something: the order parameter separated (its variance grew or shrank).
  EXPECT_GT(std::fabs(end.phi.variance - start.phi.variance), 1e-6);
  EXPECT_GT(end.velocity_max[0], 1e-7);
  for (int a = 0; a < 3; ++a) {
    EXPECT_LT(std::fabs(end.fluid_momentum[a] + end.wall_momentum[a]), 1e-12) << "axis " << a;
    if (!walls) {
      EXPECT_EQ(end.wall_momentum[a], 0.0);
    }
  }
  if (walls) {
    // The walls took up momentum the fluid lost: physical, not round-off.
    EXPECT_GT(std::fabs(end.wall_momentum[0]) + std::fabs(end.wall_momentum[1]) + std::fabs(end.wall_momentum[2]),
              1e-8);
  }
}

TEST_P(LbTargets, HostAndSimTargetsGiveTheSameBitsForAWholeRun) {
  const lb::Parameters p = small_run(12, GetParam());
  std::vector<lb::Snapshot> runs;
  for (const char* target : {"host", "sim:1", "sim:4"}) {
    targetInit(target);
    {
      lb::Solver solver(p);
      for (int t = 0; t < 15; ++t) solver.step();
      runs.push_back(solver.snapshot());
    }
    targetFinalize();
  }
  const lb::Geometry geo(p);
  for (std::size_t r = 1; r < runs.size(); ++r)
    geo.for_each_interior([&](int, int, int, std::size_t s) {
      for (int q = 0; q < lb::nvel; ++q) {
        ASSERT_TRUE(same_bits(runs[r].f[q * geo.nsites + s], runs[0].f[q * geo.nsites + s])) << "run " << r;
        ASSERT_TRUE(same_bits(runs[r].g[q * geo.nsites + s], runs[0].g[q * geo.nsites + s])) << "run " << r;
      }
    });
}

INSTANTIATE_TEST_SUITE_P(Boundaries, LbTargets, ::testing::Values(false, true),
                         [](const auto& p) { return std::string(p.param ? "walls" : "periodic"); });

TEST(LbFrontEnds, TheTargetDpAndTensorCollisionsGiveTheSameBits) {
  const lb::Parameters p = small_run(12, false);
  const lb::Geometry geo(p);
  // A state with flow in it: five steps into a run.
  targetInit("host");
  lb::CollisionState state;
  {
    lb::Solver solver(p);
    for (int t = 0; t < 5; ++t) solver.step();
    lb::Snapshot s = solver.snapshot();
    state.f = s.f;
    state.g = s.g;
    state.grad = s.grad;
    state.delsq = s.delsq;
    state.u.assign(3 * geo.nsites, 0.0);
    state.phi.assign(geo.nsites, 0.0);
    for (std::size_t site = 0; site < geo.nsites; ++site)
      for (int q = 0; q < lb::nvel; ++q) state.phi[site] += state.g[q * geo.nsites + site];
  }
  const lb::CollisionParameters k = lb::collision_parameters(p);
  lb::CollisionState reference = state;
  lb::targetdp_collision(geo, k, reference);
  targetFinalize();

  auto expect_same = [&](const lb::CollisionState& other, const std::string& what) {
    geo.for_each_interior([&](int i, int j, int k2, std::size_t s) {
      for (int q = 0; q < lb::nvel; ++q) {
        ASSERT_TRUE(same_bits(other.f[q * geo.nsites + s], reference.f[q * geo.nsites + s]))
            << what << ": f_" << q << " at " << i << "," << j << "," << k2;
        ASSERT_TRUE(same_bits(other.g[q * geo.nsites + s], reference.g[q * geo.nsites + s]))
            << what << ": g_" << q << " at " << i << "," << j << "," << k2;
      }
      for (int a = 0; a < 3; ++a) ASSERT_TRUE(same_bits(other.u[a * geo.nsites + s], reference.u[a * geo.nsites + s]));
    });
  };
  // The collision changed the state (so the comparison compares something).
  EXPECT_FALSE(same_bits(reference.f[3 * geo.nsites + geo.index(3, 4, 5)], state.f[3 * geo.nsites + geo.index(3, 4, 5)]));

  targetInit("sim:1");
  lb::CollisionState on_sim = state;
  lb::targetdp_collision(geo, k, on_sim);
  targetFinalize();
  expect_same(on_sim, "targetDP on sim:1");

  for (const char* devices : {"host", "sim:1", "sim:4"}) {
    lb::CollisionState tensor = state;
    lb::tensor_collision(geo, k, tensor, devices);
    expect_same(tensor, std::string("Tensor collision on ") + devices);
  }
}

TEST(LbErrors, ALatticeThatDoesNotFitTheTargetIsNamed) {
  targetInit("sim:1:4MiB");
  const lb::Parameters p = small_run(64, false);
  try {
    lb::Solver solver(p);
    FAIL() << "a 64^3 lattice fitted in 4 MiB";
  } catch (const tessera::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lattice 64x64x64"), std::string::npos) << m;
    EXPECT_NE(m.find("does not fit"), std::string::npos) << m;
    EXPECT_NE(m.find("sim:0"), std::string::npos) << m;
  }
  // Nothing leaked: the target can be changed (it refuses while allocations are live).
  targetInit("host");
  targetFinalize();
}

}  // namespace
