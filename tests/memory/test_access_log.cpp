// AccessLog: declared accesses become the dependencies of sequential consistency. Random
// declarations over row ranges are checked against the definition: every edge joins two
// overlapping accesses of which one writes, with the right hazard, and every earlier conflicting
// access is reached through the edges; readers never wait for readers.

#include <tessera/device/device_set.hpp>
#include <tessera/memory/access_log.hpp>

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace {

using namespace tessera;

struct Declared {
  Access mode;
  RowRange rows;
};

using Edges = std::map<int, Hazard>;

Edges declare(AccessLog<int>& log, int who, Access mode, RowRange rows) {
  Edges edges;
  log.declare(who, mode, rows, [&](int earlier, Hazard h) {
    EXPECT_TRUE(edges.emplace(earlier, h).second) << "access " << who << " reported " << earlier << " twice";
  });
  return edges;
}

TEST(AccessLog, TheDocumentedExample) {
  AccessLog<int> log;
  EXPECT_TRUE(declare(log, 1, Access::write, {0, 10}).empty());
  EXPECT_EQ(declare(log, 2, Access::read, {0, 5}), (Edges{{1, Hazard::read_after_write}}));
  EXPECT_EQ(declare(log, 3, Access::read, {5, 10}), (Edges{{1, Hazard::read_after_write}}));
  EXPECT_EQ(declare(log, 4, Access::write, {4, 6}), (Edges{{2, Hazard::write_after_read}, {3, Hazard::write_after_read}}));
  // A read_write after readers follows them, and the writer they read, whose values it reads.
  EXPECT_EQ(declare(log, 5, Access::read_write, {0, 2}),
            (Edges{{1, Hazard::read_after_write}, {2, Hazard::write_after_read}}));
  // A write after a write with no reader between.
  EXPECT_EQ(declare(log, 6, Access::write, {0, 1}), (Edges{{5, Hazard::write_after_write}}));
}

TEST(AccessLog, ReadersOfTheSameRowsDoNotWaitForEachOther) {
  AccessLog<int> log;
  (void)declare(log, 0, Access::write, {0, 8});
  for (int r = 1; r <= 5; ++r) EXPECT_EQ(declare(log, r, Access::read, {0, 8}), (Edges{{0, Hazard::read_after_write}}));
  const Edges writer = declare(log, 6, Access::write, {0, 8});
  EXPECT_EQ(writer.size(), 5u) << "a writer follows every reader since the last writer";
}

TEST(AccessLog, DisjointRowsAreIndependent) {
  AccessLog<int> log;
  (void)declare(log, 0, Access::write, {0, 4});
  EXPECT_TRUE(declare(log, 1, Access::write, {4, 8}).empty());
  EXPECT_EQ(declare(log, 2, Access::read_write, {3, 5}),
            (Edges{{0, Hazard::read_after_write}, {1, Hazard::read_after_write}}));
}

TEST(AccessLog, AWholeWriteLeavesOneSegment) {
  AccessLog<int> log;
  for (int i = 0; i < 20; ++i) (void)declare(log, i, i % 2 ? Access::read : Access::write, {std::size_t(i), std::size_t(i + 3)});
  EXPECT_GT(log.num_segments(), 5u);
  (void)declare(log, 100, Access::write, {0, 30});
  EXPECT_EQ(log.num_segments(), 1u);
}

TEST(AccessLog, ForgottenWorkIsNotFollowed) {
  AccessLog<int> log;
  (void)declare(log, 1, Access::write, {0, 4});
  EXPECT_TRUE(log.forget(1));
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(declare(log, 2, Access::read, {0, 4}).empty());
  EXPECT_FALSE(log.forget(7));
  EXPECT_TRUE(log.forget(2));
  EXPECT_TRUE(declare(log, 3, Access::write, {0, 4}).empty());
}

// A token that knows whether its work is over: long reader lists are pruned of finished ones.
struct Job {
  int id;
  const std::set<int>* done;
  bool operator==(const Job& o) const { return id == o.id; }
};
bool access_done(const Job& j) { return j.done->count(j.id) != 0; }

TEST(AccessLog, FinishedReadersArePruned) {
  std::set<int> done;
  AccessLog<Job> log;
  for (int r = 0; r < 100; ++r) {
    log.declare(Job{r, &done}, Access::read, {0, 1}, [](const Job&, Hazard) {});
    done.insert(r);
  }
  int edges = 0;
  log.declare(Job{1000, &done}, Access::write, {0, 1}, [&](const Job&, Hazard) { ++edges; });
  EXPECT_LT(edges, 40) << "finished readers are dropped once the list doubles";
}

// docs/memory.md: an AccessOrder over a real Buffer, keyed by the buffer.
TEST(AccessOrder, ReadersFollowTheWriterNotEachOther) {
  auto devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  Buffer u(memory, 64, sizeof(double), "u");
  Buffer v(memory, 64, sizeof(double), "v");
  // DOC access-order begin
  tessera::AccessOrder<int> order;
  std::vector<std::pair<int, int>> edges;  // (earlier, later)
  auto after = [&edges](int later) { return [&edges, later](int e, tessera::Hazard) { edges.push_back({e, later}); }; };
  order.declare(1, u, tessera::Access::write, {0, 64}, after(1));
  order.declare(2, u, tessera::Access::read, {0, 32}, after(2));
  order.declare(3, u, tessera::Access::read, {16, 64}, after(3));
  order.declare(4, u, tessera::Access::write, {40, 64}, after(4));
  // edges: {1,2} {1,3}: the readers follow the writer, not each other; {3,4}: the last writer
  // follows the reader of its rows only
  // DOC access-order end
  EXPECT_EQ(edges, (std::vector<std::pair<int, int>>{{1, 2}, {1, 3}, {3, 4}}));
  order.declare(5, v, tessera::Access::write, after(5));
  EXPECT_EQ(edges.size(), 3u) << "another buffer has its own log";
  Buffer u_again = u;  // a handle to the same array
  order.declare(6, u_again, tessera::Access::read, {50, 51}, after(6));
  EXPECT_EQ(edges.back(), (std::pair<int, int>{4, 6}));
}

class AccessLogRandom : public ::testing::TestWithParam<unsigned> {};

TEST_P(AccessLogRandom, EdgesAreExactlyWhatSequentialOrderNeeds) {
  constexpr std::size_t rows = 24;
  std::mt19937 rng(GetParam());
  AccessLog<int> log;
  std::vector<Declared> history;
  std::vector<std::set<int>> before;  // before[i]: every access i follows, transitively
  for (int i = 0; i < 300; ++i) {
    const Access mode = std::array{Access::read, Access::write, Access::read_write, Access::reduce}[rng() % 4];
    std::size_t a = rng() % rows, b = rng() % rows;
    if (a > b) std::swap(a, b);
    const RowRange r{a, b + 1};
    const Edges edges = declare(log, i, mode, r);
    std::set<int> reach;
    for (const auto& [j, hazard] : edges) {
      ASSERT_LT(j, i);
      const Declared& e = history[static_cast<std::size_t>(j)];
      ASSERT_TRUE(e.rows.overlaps(r)) << i << " follows " << j << " without sharing a row";
      ASSERT_TRUE(access_writes(mode) || access_writes(e.mode)) << i << " follows " << j << ", two readers";
      const Hazard want = !access_writes(e.mode)  ? Hazard::write_after_read
                          : access_reads(mode)    ? Hazard::read_after_write
                                                  : Hazard::write_after_write;
      EXPECT_EQ(hazard, want) << i << " after " << j;
      reach.insert(j);
      reach.insert(before[static_cast<std::size_t>(j)].begin(), before[static_cast<std::size_t>(j)].end());
    }
    for (int j = 0; j < i; ++j) {
      const Declared& e = history[static_cast<std::size_t>(j)];
      if (!e.rows.overlaps(r) || !(access_writes(mode) || access_writes(e.mode))) continue;
      ASSERT_TRUE(reach.count(j)) << "seed " << GetParam() << ": access " << i << " (" << to_string(mode) << " "
                                  << r.to_string() << ") does not follow " << j << " (" << to_string(e.mode) << " "
                                  << e.rows.to_string() << ")";
    }
    history.push_back({mode, r});
    before.push_back(std::move(reach));
  }
  EXPECT_LE(log.num_segments(), 2 * rows);
}

INSTANTIATE_TEST_SUITE_P(Seeds, AccessLogRandom, ::testing::Range(1u, 21u));

}  // namespace
