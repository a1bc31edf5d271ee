// Asynchronous nodes complete from another thread (as a device event callback will), and their
// successors wait for that completion, not for the node's body to return.
#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

using namespace tessera;

namespace {

// Stands in for a device stream: runs submitted work in order on its own thread.
class FakeStream {
public:
  FakeStream() : thread_([this] { loop(); }) {}
  ~FakeStream() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void submit(std::function<void()> f) {
    {
      std::lock_guard lock(m_);
      q_.push_back(std::move(f));
    }
    cv_.notify_all();
  }

private:
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

TEST(AsyncNodes, SuccessorsWaitForCompletionNotForTheBody) {
  Executor ex;
  FakeStream stream;
  NodeGraph g("async");
  std::atomic<int> value{0};
  std::atomic<int> seen_by_successor{-1};
  auto& kernel = g.emplace_async([&](AsyncDone done) {
                    stream.submit([&, done] {
                      std::this_thread::sleep_for(std::chrono::milliseconds(5));
                      value.store(42);
                      done.complete();
                    });
                  })
                     .name("kernel")
                     .kind(ExecKind::gpu);
  auto& reader = g.emplace([&] { seen_by_successor.store(value.load()); }).name("reader");
  kernel.precede(reader);
  for (int r = 0; r < 20; ++r) {
    value.store(0);
    seen_by_successor.store(-1);
    ex.run(g).get();
    ASSERT_EQ(seen_by_successor.load(), 42) << "run " << r;
  }
}

TEST(AsyncNodes, ChainsOfAsyncNodesWithBoundArguments) {
  Executor ex;
  FakeStream stream;
  NodeGraph g("async-chain");
  std::vector<int> order;
  Node* prev = nullptr;
  for (int i = 0; i < 50; ++i) {
    auto& n = g.emplace_async([&](AsyncDone done, int k) { stream.submit([&order, done, k] {
                                order.push_back(k);
                                done.complete();
                              }); },
                              i);
    if (prev) prev->precede(n);
    prev = &n;
  }
  ex.run_n(g, 4).get();
  ASSERT_EQ(order.size(), 200u);
  for (std::size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], static_cast<int>(i % 50));
}

TEST(AsyncNodes, FailReachesTheFuture) {
  Executor ex;
  FakeStream stream;
  NodeGraph g("async-fail");
  std::atomic<int> after{0};
  auto& a = g.emplace_async([&](AsyncDone done) {
               stream.submit([done] {
                 done.fail(std::make_exception_ptr(std::runtime_error("device fault")));
               });
             }).name("launch");
  auto& b = g.emplace([&] { after.fetch_add(1); }).name("after");
  a.precede(b);
  try {
    ex.run(g).get();
    FAIL();
  } catch (const NodeError& e) {
    EXPECT_EQ(e.node_name(), "launch");
    EXPECT_NE(std::string(e.what()).find("device fault"), std::string::npos);
  }
  EXPECT_EQ(after.load(), 0);
}

TEST(AsyncNodes, BodyThatThrowsFinishesTheNode) {
  Executor ex;
  NodeGraph g("async-throw");
  g.emplace_async([](AsyncDone) { throw std::runtime_error("could not enqueue"); }).name("enqueue");
  EXPECT_THROW(ex.run(g).get(), NodeError);
  EXPECT_FALSE(g.running());
}

TEST(AsyncNodes, CompletingInsideTheBodyWorks) {
  Executor ex;
  NodeGraph g("async-inline");
  std::atomic<int> n{0};
  auto& a = g.emplace_async([&](AsyncDone done) {
    n.fetch_add(1);
    done.complete();
  });
  auto& b = g.emplace([&] { n.fetch_add(10); });
  a.precede(b);
  ex.run_n(g, 100).get();
  EXPECT_EQ(n.load(), 1100);
}

// Regression: a GPU-kind node made ready from a non-worker thread while the only spinning
// worker had CPU priority (which cannot run it) was never picked up: GPU work must wake a
// GPU-priority worker.
TEST(AsyncNodes, GpuSuccessorOfAnExternallyCompletedNodeRuns) {
  ExecutorOptions opt;
  opt.gpu_workers = 1;
  opt.cpu_workers = 1;
  opt.spin_before_sleep = std::chrono::microseconds(50);  // let the GPU worker fall asleep
  Executor ex(opt);
  FakeStream stream;
  NodeGraph g("wake-gpu");
  std::atomic<int> gpu_runs{0};
  auto& a = g.emplace_async([&](AsyncDone done) {
    stream.submit([done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      done.complete();
    });
  }).name("external");
  auto& b = g.emplace([&] { gpu_runs.fetch_add(1); }).name("gpu-successor").kind(ExecKind::gpu);
  a.precede(b);
  for (int r = 0; r < 30; ++r) ex.run(g).get();
  EXPECT_EQ(gpu_runs.load(), 30);
}
