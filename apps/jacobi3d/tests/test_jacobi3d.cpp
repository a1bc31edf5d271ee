// Jacobi3D across ranks: the mobile-object solver and the hand-written MPI solver match the
// single-process reference bit for bit, on any number of ranks, with blocks that migrate between
// iterations and after a rebalance.
#include "../../../tests/dist/mpi_test_support.hpp"
#include "../mpi_solver.hpp"
#include "../objects_solver.hpp"
#include "../tensor_solver.hpp"

#include <gtest/gtest.h>

#include <limits>
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
// (Blocks of 8 and of 10 cells a side: the held planes' test treats the powers of two in the
// side apart from its odd factor.)
TEST(Jacobi3d, DistributedTensorMatchesTheReferenceBitForBit) {
  auto& comm = test_comm();
  auto odd = small_problem();
  odd.size = 30;
  for (const jacobi3d::Problem& p : {small_problem(), odd}) {
    std::vector<jacobi3d::BlockGrid> reference;
    const auto want = jacobi3d::reference(p, reference);
    const std::vector<double> dense = jacobi3d::dense_grid(p, reference);
    for (const char* devices : {"host", "sim:2:64MiB"}) {
      const auto run = jacobi3d::solve_with_tensors(comm, p, devices);
      EXPECT_EQ(run.outcome.iterations, want.iterations) << devices;
      EXPECT_EQ(run.outcome.error, want.error) << devices;
      ASSERT_EQ(run.field.size(), dense.size());
      for (std::size_t k = 0; k < dense.size(); ++k)
        ASSERT_EQ(run.field[k], dense[k]) << "cell " << k << " on " << devices << ", blocks of " << p.cells();
    }
  }
}

// The held planes' test against the remainder, for every block side to 1000, some large and
// odd ones, and indices up to the largest an index may be.
TEST(Jacobi3d, TheFirstPlaneTestIsTheRemainderForAnySide) {
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> sides;
  for (std::int64_t n = 1; n <= 1000; ++n) sides.push_back(n);
  for (std::int64_t n : std::initializer_list<std::int64_t>{4096, 65535, 65536, 999999937, std::int64_t{1} << 31,
                                                            0xffffffff, std::int64_t{3} << 40, top})
    sides.push_back(n);
  for (const std::int64_t n : sides) {
    const auto multiple_of = jacobi3d::MultipleOf::of(n);
    auto check = [&](std::int64_t g) { ASSERT_EQ(multiple_of(g), g % n == 0) << g << " for a side of " << n; };
    for (std::int64_t g = 0; g < 3000; ++g) check(g);
    for (std::int64_t k : {1, 2, 7, 1000})
      if (n <= top / (k + 1))
        for (std::int64_t g : {k * n - 1, k * n, k * n + 1}) check(g);
    for (std::int64_t g = top - 3000; g < top; ++g) check(g);
    check(top);
  }
  EXPECT_THROW(jacobi3d::MultipleOf::of(0), tessera::Error);
  EXPECT_THROW(jacobi3d::MultipleOf::of(-8), tessera::Error);
}
