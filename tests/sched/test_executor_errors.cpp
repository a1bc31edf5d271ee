// Every bad-input path gives a tessera::Error that says what was wrong; the executor stays usable.
#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace tessera;

namespace {

// Runs `f` and returns the tessera::Error message it threw (fails the test if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tessera::Error";
  return {};
}

}  // namespace

TEST(ExecutorErrors, EmptyGraphIsRejected) {
  Executor ex;
  NodeGraph g("nothing");
  auto msg = error_of([&] { ex.run(g); });
  EXPECT_NE(msg.find("'nothing' is empty"), std::string::npos) << msg;
  EXPECT_FALSE(g.running());
}

TEST(ExecutorErrors, CycleIsRejectedAndNamed) {
  Executor ex;
  NodeGraph g("loop");
  auto& a = g.emplace([] {}).name("a");
  auto& b = g.emplace([] {}).name("b");
  auto& c = g.emplace([] {}).name("c");
  auto& start = g.emplace([] {}).name("start");
  start.precede(a);
  a.precede(b);
  b.precede(c);
  c.precede(a);
  auto msg = error_of([&] { ex.run(g); });
  EXPECT_NE(msg.find("has a cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'a' -> 'b' -> 'c' -> 'a'"), std::string::npos) << msg;
  EXPECT_FALSE(g.running());
}

TEST(ExecutorErrors, SelfLoopIsACycle) {
  Executor ex;
  NodeGraph g("self");
  auto& a = g.emplace([] {}).name("me");
  a.precede(a);
  auto msg = error_of([&] { ex.run(g); });
  EXPECT_NE(msg.find("'me' -> 'me'"), std::string::npos) << msg;
}

TEST(ExecutorErrors, RunningARunningGraphIsRejected) {
  Executor ex;
  NodeGraph g("busy");
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  g.emplace([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return release; });
  }).name("blocker");
  auto first = ex.run(g);
  auto msg = error_of([&] { ex.run(g); });
  EXPECT_NE(msg.find("'busy' is already running"), std::string::npos) << msg;
  // Editing it while it runs is rejected too.
  auto edit = error_of([&] { g.emplace([] {}); });
  EXPECT_NE(edit.find("is running"), std::string::npos) << edit;
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  first.get();
  // Once the first run is done the graph runs again.
  ex.run(g).get();
}

TEST(ExecutorErrors, ThrowingNodeReachesTheFutureWithItsNameAndExecutorStaysUsable) {
  Executor ex;
  NodeGraph g("faulty");
  std::atomic<int> after{0};
  auto& ok = g.emplace([] {}).name("fine");
  auto& bad = g.emplace([] { throw std::runtime_error("disk on fire"); }).name("writer");
  auto& next = g.emplace([&] { after.fetch_add(1); }).name("after-writer");
  ok.precede(bad);
  bad.precede(next);
  auto f = ex.run_n(g, 5);
  try {
    f.get();
    FAIL() << "expected NodeError";
  } catch (const NodeError& e) {
    EXPECT_EQ(e.node_name(), "writer");
    EXPECT_NE(std::string(e.what()).find("node 'writer' threw: disk on fire"), std::string::npos) << e.what();
    EXPECT_THROW(std::rethrow_exception(e.original()), std::runtime_error);
  }
  // The failing run skipped the successors and stopped repeating.
  EXPECT_EQ(after.load(), 0);
  EXPECT_FALSE(g.running());

  // The same executor and the same graph, fixed, run again.
  NodeGraph good("good");
  std::atomic<int> n{0};
  for (int i = 0; i < 100; ++i) good.emplace([&] { n.fetch_add(1); });
  ex.run_n(good, 10).get();
  EXPECT_EQ(n.load(), 1000);
}

TEST(ExecutorErrors, ThrowingNonStdExceptionIsReported) {
  Executor ex;
  NodeGraph g;
  g.emplace([] { throw 42; }).name("int-thrower");
  try {
    ex.run(g).get();
    FAIL();
  } catch (const NodeError& e) {
    EXPECT_NE(std::string(e.what()).find("not derived from std::exception"), std::string::npos);
    EXPECT_THROW(std::rethrow_exception(e.original()), int);
  }
}

TEST(ExecutorErrors, ThrowingStopPredicateReachesTheFuture) {
  Executor ex;
  NodeGraph g("pred");
  int runs = 0;
  g.emplace([&] { ++runs; });
  auto f = ex.run_until(g, [&] {
    if (runs == 3) throw std::logic_error("bad predicate");
    return false;
  });
  try {
    f.get();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stop predicate of graph 'pred' threw: bad predicate"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(runs, 3);
}

TEST(ExecutorErrors, EmptyPredicateIsRejected) {
  Executor ex;
  NodeGraph g("p");
  g.emplace([] {});
  auto msg = error_of([&] { ex.run_until(g, nullptr); });
  EXPECT_NE(msg.find("empty stop predicate"), std::string::npos);
}

TEST(ExecutorErrors, EdgeAcrossGraphsIsRejected) {
  NodeGraph g1("one"), g2("two");
  auto& a = g1.emplace([] {}).name("a");
  auto& b = g2.emplace([] {}).name("b");
  auto msg = error_of([&] { a.precede(b); });
  EXPECT_NE(msg.find("must stay inside one graph"), std::string::npos) << msg;
}

TEST(ExecutorErrors, TooManyWorkersIsRejected) {
  ExecutorOptions opt;
  opt.cpu_workers = 100000;
  auto msg = error_of([&] { Executor ex(opt); });
  EXPECT_NE(msg.find("100001 workers"), std::string::npos) << msg;
}

TEST(ExecutorErrors, ExceptionInParallelForReachesTheCaller) {
  ExecutorOptions opt;
  opt.inline_loops_below = std::chrono::nanoseconds{0};
  Executor ex(opt);
  std::atomic<int> ran{0};
  EXPECT_THROW(ex.parallel_for(0, 100000,
                               [&](std::size_t i) {
                                 ran.fetch_add(1, std::memory_order_relaxed);
                                 if (i == 777) throw std::out_of_range("index 777");
                               }),
               std::out_of_range);
  // The pool still works afterwards.
  std::atomic<long> sum{0};
  ex.parallel_for(0, 1000, [&](std::size_t i) { sum.fetch_add(static_cast<long>(i)); });
  EXPECT_EQ(sum.load(), 999L * 1000 / 2);
}

TEST(ExecutorErrors, DestroyingAnExecutorWaitsForRunningGraphs) {
  NodeGraph g("slow");
  std::atomic<int> done{0};
  for (int i = 0; i < 16; ++i)
    g.emplace([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      done.fetch_add(1);
    });
  std::future<void> f;
  {
    Executor ex;
    f = ex.run_n(g, 3);
  }
  EXPECT_EQ(done.load(), 48);
  f.get();
}

TEST(ExecutorErrors, ExceptionWhileALoopIsBeingSizedUpReachesTheCaller) {
  Executor ex;  // default options: the first iterations are timed before helpers go out
  EXPECT_THROW(ex.parallel_for(0, 1000, [](std::size_t i) {
                 if (i == 3) throw std::invalid_argument("bad row 3");
               }),
               std::invalid_argument);
  std::vector<int> v(100000, 0);
  ex.parallel_for(0, v.size(), [&](std::size_t i) { v[i] = 1; });
  EXPECT_EQ(std::count(v.begin(), v.end(), 1), 100000);
}
