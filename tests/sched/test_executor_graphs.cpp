// Graphs run with every dependency respected, many times over, in every steal strategy.
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <random>
#include <vector>

using namespace tessera;

namespace {

// A random DAG: edges only from lower to higher index, so it is acyclic by construction.
// Each node takes an order stamp when it runs; every edge must see stamp(from) < stamp(to).
struct StampedDag {
  explicit StampedDag(std::size_t n, std::size_t max_fan_in, std::uint32_t seed)
      : graph("random-dag"), stamps(n), runs(n) {
    std::mt19937 rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
      graph.emplace([this, i] {
        stamps[i].store(clock.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
        runs[i].fetch_add(1, std::memory_order_relaxed);
      }).name("n" + std::to_string(i));
    }
    for (std::size_t i = 1; i < n; ++i) {
      std::size_t fan_in = rng() % (max_fan_in + 1);
      for (std::size_t k = 0; k < fan_in; ++k) {
        std::size_t from = rng() % i;
        graph.node(from).precede(graph.node(i));
        edges.emplace_back(from, i);
      }
    }
  }

  void check_order() const {
    for (auto [from, to] : edges)
      ASSERT_LT(stamps[from].load(), stamps[to].load()) << "edge n" << from << " -> n" << to;
  }

  NodeGraph graph;
  std::atomic<std::uint64_t> clock{0};
  std::vector<std::atomic<std::uint64_t>> stamps;
  std::vector<std::atomic<std::uint64_t>> runs;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
};

class ExecutorStrategies : public ::testing::TestWithParam<StealStrategy> {};

}  // namespace

TEST_P(ExecutorStrategies, RandomDagRespectsEveryDependencyAcrossManyRuns) {
  ExecutorOptions opt;
  opt.steal_strategy = GetParam();
  opt.gpu_workers = 2;
  opt.cpu_workers = 2;
  Executor ex(opt);
  StampedDag dag(10000, 4, 1234);
  for (int r = 0; r < 100; ++r) {
    ex.run(dag.graph).get();
    dag.check_order();
  }
  for (auto& n : dag.runs) ASSERT_EQ(n.load(), 100u);
  // Between runs every node's pending count is back at its predecessor count.
  for (std::size_t i = 0; i < dag.graph.size(); ++i)
    ASSERT_EQ(dag.graph.node(i).pending(), dag.graph.node(i).num_predecessors());
}

INSTANTIATE_TEST_SUITE_P(Steal, ExecutorStrategies,
                         ::testing::Values(StealStrategy::round_robin, StealStrategy::random,
                                           StealStrategy::topological),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(Executor, RunNHundredsOfTimesCountsEveryNode) {
  Executor ex;
  StampedDag dag(500, 3, 99);
  ex.run_n(dag.graph, 300).get();
  for (auto& n : dag.runs) ASSERT_EQ(n.load(), 300u);
}

// precede_once adds an edge once, and none to the node itself: the successor runs after its one
// predecessor, once per run.
TEST(Executor, PrecedeOnceAddsEachEdgeOnce) {
  Executor ex;
  NodeGraph g("once");
  std::atomic<int> a_runs{0}, b_runs{0}, b_after_a{0};
  Node& a = g.emplace([&] { a_runs.fetch_add(1); });
  Node& b = g.emplace([&] {
    if (b_runs.fetch_add(1) < a_runs.load()) b_after_a.fetch_add(1);
  });
  a.precede_once(b).precede_once(b).precede_once(a);
  EXPECT_EQ(b.num_predecessors(), 1u);
  EXPECT_EQ(a.num_predecessors(), 0u);
  EXPECT_EQ(a.successors().size(), 1u);
  ex.run_n(g, 3).get();
  EXPECT_EQ(b_runs.load(), 3);
  EXPECT_EQ(b_after_a.load(), 3);
}

TEST(Executor, RunUntilChecksBeforeEveryRun) {
  Executor ex;
  NodeGraph g("counter");
  int count = 0;
  g.emplace([&] { ++count; }).name("inc");
  ex.run_until(g, [&] { return count >= 7; }).get();
  EXPECT_EQ(count, 7);
  // Already satisfied: the graph does not run at all.
  ex.run_until(g, [&] { return true; }).get();
  EXPECT_EQ(count, 7);
  ex.run_n(g, 0).get();
  EXPECT_EQ(count, 7);
}

TEST(Executor, BoundArgumentsAreCopiedAtEmplace) {
  Executor ex;
  NodeGraph g;
  std::vector<int> out;
  int value = 5;
  auto append = [&out](int v, const std::string& s) { out.push_back(v + static_cast<int>(s.size())); };
  auto& a = g.emplace(append, value, std::string("abc"));
  value = 100;  // the node keeps its own copy
  auto& b = g.emplace(append, 1, std::string(""));
  a.precede(b);
  ex.run(g).get();
  EXPECT_EQ(out, (std::vector<int>{8, 1}));
}

TEST(Executor, ChainRunsInOrderAndTreeReducesCorrectly) {
  Executor ex;
  NodeGraph chain("chain");
  std::vector<int> order;
  Node* prev = nullptr;
  for (int i = 0; i < 1000; ++i) {
    Node& n = chain.emplace([&order, i] { order.push_back(i); });
    if (prev) prev->precede(n);
    prev = &n;
  }
  ex.run_n(chain, 3).get();
  ASSERT_EQ(order.size(), 3000u);
  for (std::size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], static_cast<int>(i % 1000));

  // Binary reduction tree over 1024 leaves: the root sees the sum of all leaves.
  NodeGraph tree("tree");
  std::vector<long> value(2047, 0);
  std::vector<Node*> nodes(2047);
  for (std::size_t i = 0; i < 2047; ++i) {
    nodes[i] = i >= 1023 ? &tree.emplace([&value, i] { value[i] = static_cast<long>(i - 1022); })
                         : &tree.emplace([&value, i] { value[i] = value[2 * i + 1] + value[2 * i + 2]; });
  }
  for (std::size_t i = 0; i < 1023; ++i) {
    nodes[2 * i + 1]->precede(*nodes[i]);
    nodes[2 * i + 2]->precede(*nodes[i]);
  }
  ex.run_n(tree, 10).get();
  EXPECT_EQ(value[0], 1024L * 1025L / 2);
}

TEST(Executor, ManyGraphsRunConcurrentlyOnOneExecutor) {
  Executor ex;
  std::vector<std::unique_ptr<StampedDag>> dags;
  std::vector<std::future<void>> futures;
  for (std::uint32_t s = 0; s < 8; ++s) dags.push_back(std::make_unique<StampedDag>(2000, 3, s));
  for (auto& d : dags) futures.push_back(ex.run_n(d->graph, 5));
  for (auto& f : futures) f.get();
  for (auto& d : dags) {
    d->check_order();
    for (auto& n : d->runs) ASSERT_EQ(n.load(), 5u);
  }
}

TEST(Executor, GraphStartedFromInsideANodeRuns) {
  Executor ex;
  NodeGraph inner("inner");
  std::atomic<int> hits{0};
  for (int i = 0; i < 100; ++i) inner.emplace([&] { hits.fetch_add(1); });
  NodeGraph outer("outer");
  std::future<void> inner_done;
  outer.emplace([&] { inner_done = ex.run_n(inner, 3); });
  ex.run(outer).get();
  inner_done.get();
  EXPECT_EQ(hits.load(), 300);
}

TEST(Executor, WaitForAllWaitsForEveryRun) {
  Executor ex;
  NodeGraph g;
  std::atomic<int> n{0};
  for (int i = 0; i < 64; ++i) g.emplace([&] { n.fetch_add(1); });
  auto f = ex.run_n(g, 50);
  ex.wait_for_all();
  EXPECT_EQ(n.load(), 64 * 50);
  f.get();
}

TEST(Executor, ReRunsHundredsOfTimesWithoutGrowingMemory) {
  // Each run allocates its bookkeeping and frees it when done; ASan's leak check on this suite
  // catches anything a run leaves behind. Here: the runs complete and the counts add up.
  Executor ex;
  StampedDag dag(1000, 2, 7);
  for (int r = 0; r < 200; ++r) ex.run(dag.graph).get();
  for (auto& n : dag.runs) ASSERT_EQ(n.load(), 200u);
}
