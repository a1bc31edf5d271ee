// parallel_for and parallel_reduce on the executor's pool, against sequential loops.
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

using namespace tessera;

namespace {
// Loops in these tests are small; without this they would run on the caller alone.
ExecutorOptions always_parallel() {
  ExecutorOptions o;
  o.inline_loops_below = std::chrono::nanoseconds{0};
  return o;
}
}  // namespace

TEST(ParallelFor, VisitsEveryIndexExactlyOnce) {
  Executor ex(always_parallel());
  for (std::size_t n : {0ul, 1ul, 2ul, 7ul, 1024ul, 100003ul}) {
    std::vector<std::atomic<int>> hits(n);
    ex.parallel_for(0, n, [&](std::size_t i) { hits[i].fetch_add(1, std::memory_order_relaxed); });
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, OffsetRangesAndGrain) {
  Executor ex(always_parallel());
  std::vector<int> v(1000, 0);
  ex.parallel_for(100, 900, [&](std::size_t i) { v[i] = static_cast<int>(i); }, 64);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], (i >= 100 && i < 900) ? static_cast<int>(i) : 0);
  auto plan = ex.plan_loop(100, 900, 64);
  EXPECT_GE(plan.chunk, 64u);
  EXPECT_EQ(plan.chunk_end(plan.count - 1), 900u);
}

TEST(ParallelFor, SaxpyMatchesSequential) {
  Executor ex(always_parallel());
  const std::size_t n = 1 << 20;
  std::vector<float> x(n), y(n), ref(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97) * 0.5f;
    y[i] = static_cast<float>(i % 13);
    ref[i] = 2.5f * x[i] + y[i];
  }
  ex.parallel_for(0, n, [&](std::size_t i) { y[i] = 2.5f * x[i] + y[i]; });
  EXPECT_EQ(y, ref);
}

TEST(ParallelFor, NestedInsideGraphNodesAndLoops) {
  Executor ex(always_parallel());
  const std::size_t rows = 64, cols = 257;
  std::vector<double> m(rows * cols, 0.0);
  NodeGraph g("nested");
  for (int part = 0; part < 4; ++part)
    g.emplace([&, part] {
      ex.parallel_for(static_cast<std::size_t>(part) * rows / 4, static_cast<std::size_t>(part + 1) * rows / 4,
                      [&](std::size_t r) {
                        ex.parallel_for(0, cols, [&](std::size_t c) { m[r * cols + c] = static_cast<double>(r * c); });
                      });
    });
  ex.run(g).get();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) ASSERT_EQ(m[r * cols + c], static_cast<double>(r * c));
}

TEST(ParallelReduce, SumMaxAndDeterminism) {
  Executor ex(always_parallel());
  const std::size_t n = 3'000'001;
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<double>(i)) * 1e3;
  auto sum = [&] {
    return ex.parallel_reduce(0, n, 0.0, [&](std::size_t i, double& acc) { acc += x[i]; }, std::plus<>{});
  };
  double s1 = sum();
  double ref = 0.0;
  for (double v : x) ref += v;
  EXPECT_NEAR(s1, ref, 1e-6 * std::abs(ref) + 1e-6);
  // Same range, same executor: bitwise the same answer every time.
  for (int r = 0; r < 10; ++r) ASSERT_EQ(sum(), s1);

  double mx = ex.parallel_reduce(
      0, n, -1e300, [&](std::size_t i, double& acc) { acc = std::max(acc, x[i]); },
      [](double a, double b) { return std::max(a, b); });
  EXPECT_EQ(mx, *std::max_element(x.begin(), x.end()));

  long count = ex.parallel_reduce(0, 0, 17L, [](std::size_t, long& a) { ++a; }, std::plus<>{});
  EXPECT_EQ(count, 17L);
}

TEST(ParallelReduce, IntegerSumOfAnArithmeticSeries) {
  Executor ex(always_parallel());
  const std::size_t n = 10'000'000;
  auto s = ex.parallel_reduce(0, n, std::uint64_t{0}, [](std::size_t i, std::uint64_t& a) { a += i; }, std::plus<>{});
  EXPECT_EQ(s, std::uint64_t{n} * (n - 1) / 2);
}

TEST(ParallelFor, DefaultExecutorFreeFunction) {
  std::vector<int> v(5000);
  tessera::parallel_for(0, v.size(), [&](std::size_t i) { v[i] = 2 * static_cast<int>(i); });
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], 2 * static_cast<int>(i));
  auto total = tessera::parallel_reduce(0, v.size(), 0L, [&](std::size_t i, long& a) { a += v[i]; }, std::plus<>{});
  EXPECT_EQ(total, 4999L * 5000);
}

TEST(ParallelFor, SmallCheapLoopsRunOnTheCaller) {
  Executor ex;  // default: loops cheaper than a round trip to another core stay inline
  // The caller times the first iteration to decide; a preemption during it (a loaded CI machine)
  // makes one launch look expensive, so the loop gets a few launches to show it stays inline.
  int inline_runs = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::atomic<int> other_threads{0};
    const auto me = std::this_thread::get_id();
    ex.parallel_for(0, 64, [&](std::size_t) {
      if (std::this_thread::get_id() != me) other_threads.fetch_add(1);
    });
    inline_runs += other_threads.load() == 0 ? 1 : 0;
  }
  EXPECT_GE(inline_runs, 1);
}

TEST(ParallelFor, ExpensiveLoopsUseTheWorkers) {
  Executor ex;
  std::atomic<int> other_threads{0};
  const auto me = std::this_thread::get_id();
  ex.parallel_for(0, 64, [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (std::this_thread::get_id() != me) other_threads.fetch_add(1);
  }, 1);
  EXPECT_GT(other_threads.load(), 0);
}
