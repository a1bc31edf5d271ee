// Jacobi3D across ranks: the mobile-object solver and the hand-written MPI solver match the
// single-process reference bit for bit, on any number of ranks, with blocks that migrate between
// iterations and after a rebalance.
#include "../../../tests/dist/mpi_test_support.hpp"
#include "../mpi_solver.hpp"
#include "../objects_solver.hpp"
#include "../tensor_solver.hpp"

#include <gtest/gtest.h>

#include <random>

namespace {

jacobi3d::Problem small_problem() {
  jacobi3d::Problem p;
  p.size = 24;
  p.blocks = 3;  // 27 blocks of 8^3: faces between ranks for any rank count
  p.max_iterations = 26;
  p.threshold = 0.01;
  return p;
}

}  // namespace

TEST(Jacobi3d, ReferenceHoldsThePlanesAndConverges) {
  auto p = small_problem();
  p.max_iterations = 400;
  std::vector<jacobi3d::BlockGrid> grid;
  const auto out = jacobi3d::reference(p, grid);
  EXPECT_LT(out.iterations, 400);  // converged: the largest change fell below the threshold
  EXPECT_LT(out.error, p.threshold);
  for (const auto& b : grid) {
    EXPECT_EQ(b.t[b.at(1, 3, 4)], 255.0);
    EXPECT_EQ(b.t[b.at(5, 1, 2)], 255.0);
    EXPECT_EQ(b.t[b.at(2, 6, 1)], 255.0);
    for (std::size_t i = 0; i < b.t.size(); ++i) ASSERT_TRUE(b.t[i] >= 0.0 && b.t[i] <= 255.0);
  }
}

TEST(Jacobi3d, MobileObjectsMatchTheReferenceBitForBit) {
  auto& comm = test_comm();
  const auto p = small_problem();
  std::vector<jacobi3d::BlockGrid> reference;
  const auto want = jacobi3d::reference(p, reference);
  std::size_t checked = 0;
  const auto run = jacobi3d::solve_with_objects(comm, p, {}, [&](tessera::dist::Objects& objects) {
    for (auto name : objects.local_names()) {
      const auto& b = objects.local<jacobi3d::Block>(name);
      EXPECT_EQ(jacobi3d::digest(b.grid), jacobi3d::digest(reference[static_cast<std::size_t>(b.id)]))
          << "block " << b.id;
      ++checked;
    }
  });
  EXPECT_EQ(run.outcome.iterations, want.iterations);
  EXPECT_EQ(run.outcome.error, want.error);
  EXPECT_EQ(comm.all_reduce(static_cast<std::int64_t>(checked), tessera::dist::Communicator::Reduce::sum), 27);
}

TEST(Jacobi3d, MigratingBlocksChangeNoBit) {
  auto& comm = test_comm();
  const auto p = small_problem();
  std::vector<jacobi3d::BlockGrid> reference;
  const auto want = jacobi3d::reference(p, reference);
  std::mt19937 gen(7);  // the same moves asked on every rank: each block moves once per request
  std::uniform_int_distribution<int> block(0, 26), to(0, comm.size() - 1);
  std::int64_t moved = 0;
  const auto run = jacobi3d::solve_with_objects(
      comm, p,
      [&](int it, tessera::dist::Objects& objects) {
        for (int k = 0; k < 4; ++k) {
          const int b = block(gen), r = to(gen);
          if (comm.rank() == (it + k) % comm.size()) objects.migrate(jacobi3d::block_name(b), r);
        }
        if (it == 5) moved += static_cast<std::int64_t>(objects.rebalance());
      },
      [&](tessera::dist::Objects& objects) {
        for (auto name : objects.local_names()) {
          const auto& b = objects.local<jacobi3d::Block>(name);
          EXPECT_EQ(jacobi3d::digest(b.grid), jacobi3d::digest(reference[static_cast<std::size_t>(b.id)]))
              << "block " << b.id;
        }
        EXPECT_GT(objects.statistics().migrated_in + objects.statistics().migrated_out + (comm.size() == 1 ? 1u : 0u),
                  0u);
      });
  EXPECT_EQ(run.outcome.iterations, want.iterations);
  EXPECT_EQ(run.outcome.error, want.error);
}

TEST(Jacobi3d, HandWrittenMpiMatchesTheReferenceBitForBit) {
  const auto p = small_problem();
  std::vector<jacobi3d::BlockGrid> reference;
  const auto want = jacobi3d::reference(p, reference);
  const auto run = jacobi3d::solve_with_mpi(MPI_COMM_WORLD, p);
  EXPECT_EQ(run.outcome.iterations, want.iterations);
  EXPECT_EQ(run.outcome.error, want.error);
  for (const auto& [id, b] : run.blocks)
    EXPECT_EQ(jacobi3d::digest(b), jacobi3d::digest(reference[static_cast<std::size_t>(id)])) << "block " << id;
}

// The proxy on a distributed tensor and graph: the reference's bits, whatever the ranks, on the
// host and with each rank's blocks on simulated devices.
TEST(Jacobi3d, DistributedTensorMatchesTheReferenceBitForBit) {
  auto& comm = test_comm();
  const auto p = small_problem();
  std::vector<jacobi3d::BlockGrid> reference;
  const auto want = jacobi3d::reference(p, reference);
  const std::vector<double> dense = jacobi3d::dense_grid(p, reference);
  for (const char* devices : {"host", "sim:2:64MiB"})
    for (const auto planes : {jacobi3d::PlaneTest::by_block_index_where_possible, jacobi3d::PlaneTest::by_division}) {
      const auto run = jacobi3d::solve_with_tensors(comm, p, devices, planes);
      const std::string what = std::string(devices) + (run.planes_by_block_index ? ", planes by block index" : ", planes by division");
      EXPECT_EQ(run.outcome.iterations, want.iterations) << what;
      EXPECT_EQ(run.outcome.error, want.error) << what;
      ASSERT_EQ(run.field.size(), dense.size());
      for (std::size_t k = 0; k < dense.size(); ++k) ASSERT_EQ(run.field[k], dense[k]) << "cell " << k << " on " << what;
    }
}

// The block-index test of the held planes is taken exactly where each tensor block is one proxy
// block: on one rank (3^3 blocks of 8^3) and three (1 x 1 x 3 ranks, each 3 x 3 x 1 blocks),
// not on two or four, whose rank grids do not divide the three blocks per side.
TEST(Jacobi3d, DistributedTensorTestsPlanesByBlockIndexWhereBlocksAlign) {
  auto& comm = test_comm();
  const auto run = jacobi3d::solve_with_tensors(comm, small_problem());
  std::size_t ranks_per_side_dividing_3 = 0;
  for (std::size_t d = 0; d < 3; ++d) ranks_per_side_dividing_3 += 3 % run.rank_grid.sizes[d] == 0 ? 1 : 0;
  EXPECT_EQ(run.planes_by_block_index, ranks_per_side_dividing_3 == 3)
      << "rank grid " << run.rank_grid.sizes[0] << " x " << run.rank_grid.sizes[1] << " x " << run.rank_grid.sizes[2];
  EXPECT_FALSE(jacobi3d::solve_with_tensors(comm, small_problem(), "host", jacobi3d::PlaneTest::by_division)
                   .planes_by_block_index);
}
