// Progress sources: completions that only a poll finds (MPI requests, device events) are found
// by the executor's idle workers, which queue the nodes those completions release instead of
// running them inside the poll, and stop polling a source once its registration ends.
#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/job.hpp>
#include <tessera/sched/progress.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

using namespace tessera;
using namespace std::chrono_literals;

namespace {

// Completes the async node it was handed on its `after`-th poll. Nothing else polls it: a run
// that ends before the test's fallback steps in was finished by an idle worker's poll.
class CountdownSource final : public ProgressSource {
 public:
  explicit CountdownSource(int after) : after_(after) {}

  void arm(AsyncDone done) {
    std::lock_guard lock(mutex_);
    done_ = done;
    polls_since_armed_ = 0;
  }
  bool poll() noexcept override {
    polls_.fetch_add(1, std::memory_order_relaxed);
    std::optional<AsyncDone> ready;
    {
      std::lock_guard lock(mutex_);
      if (!done_ || ++polls_since_armed_ < after_) return false;
      ready.swap(done_);
    }
    polling_thread = true;
    ready->complete();
    polling_thread = false;
    return true;
  }
  // Completes a pending node from the test thread, as a source's own progress thread would once
  // the workers sleep. Returns whether one was pending.
  bool rescue() {
    std::optional<AsyncDone> ready;
    {
      std::lock_guard lock(mutex_);
      ready.swap(done_);
    }
    if (ready) ready->complete();
    return ready.has_value();
  }
  long polls() const { return polls_.load(); }

  // Set on the thread inside poll() while it completes the node.
  static thread_local bool polling_thread;

 private:
  const int after_;
  std::mutex mutex_;
  std::optional<AsyncDone> done_;
  int polls_since_armed_ = 0;
  std::atomic<long> polls_{0};
};
thread_local bool CountdownSource::polling_thread = false;

// Runs `graph` `runs` times and returns how many runs a worker's poll finished. A worker only
// polls while it looks for work (200 us by default), so on a loaded machine it may sleep first;
// then the test completes the node after 100 ms, as a source's own thread would.
int runs_finished_by_polls(Executor& ex, NodeGraph& graph, CountdownSource& source, int runs) {
  int polled = 0;
  for (int k = 0; k < runs; ++k) {
    auto run = ex.run(graph);
    if (run.wait_for(100ms) == std::future_status::ready || !source.rescue()) ++polled;
    run.get();
  }
  return polled;
}

}  // namespace

TEST(ProgressSources, IdleWorkersFinishAnAsyncNodeOnlyAPollCompletes) {
  CountdownSource source(3);
  ProgressRegistration registered = register_progress_source(source);
  Executor ex(ExecutorOptions{.cpu_workers = 2});
  NodeGraph graph("polled");
  std::atomic<int> after{0};
  auto& wait = graph.emplace_async([&](AsyncDone done) { source.arm(done); }).name("wait for the message");
  auto& next = graph.emplace([&] { after.fetch_add(1); }).name("unpack");
  wait.precede(next);
  const int polled = runs_finished_by_polls(ex, graph, source, 20);
  EXPECT_EQ(after.load(), 20);
  EXPECT_GT(polled, 0) << "no run of 20 was finished by an idle worker's poll (" << source.polls() << " polls)";
}

TEST(ProgressSources, ReleasedNodesRunOutsideThePoll) {
  CountdownSource source(1);
  ProgressRegistration registered = register_progress_source(source);
  Executor ex(ExecutorOptions{.cpu_workers = 1});
  NodeGraph graph("released");
  std::atomic<int> ran_inside{0}, ran{0};
  auto& wait = graph.emplace_async([&](AsyncDone done) { source.arm(done); });
  for (int k = 0; k < 4; ++k) {
    auto& successor = graph.emplace([&] {
      ran.fetch_add(1);
      if (CountdownSource::polling_thread) ran_inside.fetch_add(1);
    });
    wait.precede(successor);
  }
  const int polled = runs_finished_by_polls(ex, graph, source, 10);
  EXPECT_GT(polled, 0) << "no run of 10 was finished by an idle worker's poll";
  EXPECT_EQ(ran.load(), 40);
  EXPECT_EQ(ran_inside.load(), 0) << "a node ran inside the source's poll, holding the source meanwhile";
}

TEST(ProgressSources, AFailedCompletionFromAPollReachesTheRun) {
  struct Failing final : ProgressSource {
    std::mutex mutex;
    std::optional<AsyncDone> done;
    bool poll() noexcept override {
      std::optional<AsyncDone> d;
      {
        std::lock_guard lock(mutex);
        d.swap(done);
      }
      if (!d) return false;
      d->fail(std::make_exception_ptr(Error("the message was truncated")));
      return true;
    }
  } source;
  ProgressRegistration registered = register_progress_source(source);
  Executor ex;
  NodeGraph graph("fails");
  graph
      .emplace_async([&](AsyncDone d) {
        std::lock_guard lock(source.mutex);
        source.done = d;
      })
      .name("receive");
  auto run = ex.run(graph);
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready) << "no idle worker polled the source";
  try {
    run.get();
    FAIL() << "the failure did not reach the run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the message was truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("receive"), std::string::npos) << e.what();
  }
}

TEST(ProgressSources, EndingARegistrationWaitsForAPollInProgressAndStopsPolls) {
  struct Slow final : ProgressSource {
    std::atomic<int> entered{0};
    std::atomic<bool> inside{false};
    bool poll() noexcept override {
      inside.store(true);
      if (entered.fetch_add(1) == 0) std::this_thread::sleep_for(50ms);  // the first poll lingers
      inside.store(false);
      return false;
    }
  } source;
  std::optional<ProgressRegistration> registered(register_progress_source(source));
  Executor ex(ExecutorOptions{.cpu_workers = 1});
  NodeGraph graph("idle");
  graph.emplace([] {});
  // Workers poll while they look for work after the run.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (source.entered.load() == 0 && std::chrono::steady_clock::now() < deadline) ex.run(graph).get();
  ASSERT_GT(source.entered.load(), 0) << "no idle worker polled the source";
  registered.reset();
  EXPECT_FALSE(source.inside.load()) << "the registration ended while a worker was inside poll()";
  const int polls = source.entered.load();
  for (int k = 0; k < 20; ++k) ex.run(graph).get();
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(source.entered.load(), polls) << "a worker polled a source whose registration had ended";
}

TEST(ProgressSources, MovingARegistrationKeepsOneRegistration) {
  struct Counting final : ProgressSource {
    std::atomic<int> polls{0};
    bool poll() noexcept override {
      polls.fetch_add(1);
      return false;
    }
  } source;
  ProgressRegistration a = register_progress_source(source);
  ProgressRegistration b = std::move(a);
  EXPECT_FALSE(a.active());
  EXPECT_TRUE(b.active());
  ProgressRegistration c;
  c = std::move(b);
  EXPECT_TRUE(c.active());
  c.reset();
  EXPECT_FALSE(c.active());
  Executor ex(ExecutorOptions{.cpu_workers = 1});
  NodeGraph graph("after");
  graph.emplace([] {});
  for (int k = 0; k < 10; ++k) ex.run(graph).get();
  std::this_thread::sleep_for(2ms);
  EXPECT_EQ(source.polls.load(), 0);
}

namespace {

// 100 us of work; the first one to run opens the gate of the source below.
struct BusyJob : Job {
  std::atomic<int>* done = nullptr;
  std::atomic<bool>* started = nullptr;
  BusyJob()
      : Job([](Job& self) {
          auto& job = static_cast<BusyJob&>(self);
          job.started->store(true);
          const auto until = std::chrono::steady_clock::now() + 100us;
          while (std::chrono::steady_clock::now() < until) {
          }
          job.done->fetch_add(1);
        }) {}
};

}  // namespace

TEST(ProgressSources, ABusyWorkerPollsBetweenItsTasks) {
  // The source completes only once the busy jobs have started, so only polls made while the one
  // worker runs them (between its tasks; it never looks for work until they are done) can do it.
  struct Gated final : ProgressSource {
    std::atomic<bool> started{false};
    std::atomic<int> done{0};
    std::atomic<int> done_when_completed{-1};
    std::mutex mutex;
    std::optional<AsyncDone> waiting;
    bool poll() noexcept override {
      if (!started.load()) return false;
      std::optional<AsyncDone> d;
      {
        std::lock_guard lock(mutex);
        d.swap(waiting);
      }
      if (!d) return false;
      done_when_completed.store(done.load());
      d->complete();
      return true;
    }
  } source;
  ProgressRegistration registered = register_progress_source(source);
  Executor ex(ExecutorOptions{.gpu_workers = 1, .cpu_workers = 0});
  NodeGraph graph("receive");
  std::atomic<bool> armed{false};
  graph.emplace_async([&](AsyncDone d) {
    std::lock_guard lock(source.mutex);
    source.waiting = d;
    armed.store(true);
  });
  auto run = ex.run(graph);
  while (!armed.load()) std::this_thread::yield();
  std::vector<BusyJob> jobs(200);
  for (auto& job : jobs) {
    job.done = &source.done;
    job.started = &source.started;
    ex.schedule(job);
  }
  ASSERT_EQ(run.wait_for(10s), std::future_status::ready);
  run.get();
  while (source.done.load() < 200) std::this_thread::sleep_for(1ms);
  // Polled at least every 50 us of tasks: within the first jobs, never after the last.
  EXPECT_GE(source.done_when_completed.load(), 0);
  EXPECT_LT(source.done_when_completed.load(), 100) << "the busy worker did not poll between its tasks";
}

TEST(ProgressSources, ABusyWorkerPollsBetweenTheChunksOfALongLoop) {
  // One node that is one long parallel loop (6.4 ms on the only worker): polls between tasks
  // alone would leave a message unprogressed for all of it. Its chunks (eight for one worker) end
  // 800 us apart, and each end may poll.
  struct Counting final : ProgressSource {
    std::atomic<bool> in_loop{false};
    std::atomic<int> polls_in_loop{0};
    bool poll() noexcept override {
      if (in_loop.load()) polls_in_loop.fetch_add(1);
      return false;
    }
  } source;
  ProgressRegistration registered = register_progress_source(source);
  Executor ex(ExecutorOptions{.gpu_workers = 1, .cpu_workers = 0});
  NodeGraph graph("one long loop");
  graph.emplace([&] {
    source.in_loop.store(true);
    ex.parallel_for(0, 64, [](std::size_t) {
      const auto start = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - start < 100us) {
      }
    });
    source.in_loop.store(false);
  });
  ex.run(graph).get();
  EXPECT_GE(source.polls_in_loop.load(), 4) << "the worker did not poll between the loop's chunks";
}

namespace {
// Polls nothing; counts how often the last awake worker told it that nobody polls now.
struct WatchingSource final : ProgressSource {
  std::atomic<int> told{0};
  bool poll() noexcept override { return false; }
  void unattended() noexcept override { told.fetch_add(1); }
};
}  // namespace

TEST(ProgressSources, TheLastWorkerToSleepTellsTheSources) {
  WatchingSource source;
  ProgressRegistration registered = register_progress_source(source);
  {
    Executor ex(ExecutorOptions{.cpu_workers = 2});
    NodeGraph graph("work");
    for (int k = 0; k < 8; ++k) graph.emplace([] {});
    ex.run_n(graph, 10).get();
    // The workers look for work for 200 us, then sleep; the last of them tells the source.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while ((attending_workers() > 0 || source.told.load() == 0) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    EXPECT_EQ(attending_workers(), 0);
    EXPECT_GT(source.told.load(), 0);
    const int told = source.told.load();
    ex.run(graph).get();  // wakes them: they attend again, and tell again once they sleep
    while (source.told.load() == told && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    EXPECT_GT(source.told.load(), told);
  }
  EXPECT_EQ(attending_workers(), 0);
}

TEST(ProgressSources, AWorkerBlockedInAWaitStopsAttending) {
  WatchingSource source;
  ProgressRegistration registered = register_progress_source(source);
  Executor ex(ExecutorOptions{.gpu_workers = 1, .cpu_workers = 0});
  std::atomic<bool> blocked{false}, release{false};
  std::atomic<int> attending_while_blocked{-1}, told_before{-1};
  NodeGraph graph("blocks");
  graph.emplace([&] {
    told_before.store(source.told.load());
    {
      BlockedWorker waiting;  // what a receive's wait does on a worker
      attending_while_blocked.store(attending_workers());
      blocked.store(true);
      while (!release.load()) std::this_thread::sleep_for(100us);
    }
  });
  auto run = ex.run(graph);
  while (!blocked.load()) std::this_thread::yield();
  EXPECT_EQ(attending_while_blocked.load(), 0) << "the blocked worker still counted as polling";
  EXPECT_GT(source.told.load(), told_before.load()) << "the sources were not told that nobody polls them";
  release.store(true);
  run.get();
}

TEST(ProgressSources, ABlockedWorkerGuardOnAnotherThreadCountsNothing) {
  ASSERT_EQ(attending_workers(), 0);  // no executor alive in this test
  {
    BlockedWorker not_a_worker;  // the test's thread is no worker: a decrement would read -1
    EXPECT_EQ(attending_workers(), 0);
  }
  EXPECT_EQ(attending_workers(), 0);
}

// clang-format off
TEST(ProgressSources, DocExample) {
  tessera::Executor ex;
  // DOC progress-example begin
  // A completion word that a DMA engine sets and nothing signals: only a poll sees it.
  struct Doorbell final : tessera::ProgressSource {
    std::atomic<bool> rung{false};
    std::mutex mutex;
    std::optional<tessera::AsyncDone> waiting;
    bool poll() noexcept override {
      std::optional<tessera::AsyncDone> done;
      {
        std::lock_guard lock(mutex);
        if (!rung.load() || !waiting) return false;
        done.swap(waiting);
      }
      done->complete();  // queues the node's successors; a worker runs them next
      return true;
    }
  } bell;
  tessera::ProgressRegistration registered = tessera::register_progress_source(bell);
  // Workers poll only while they look for work; a source still needs a thread of its own.
  std::jthread own_thread([&](std::stop_token stop) {
    while (!stop.stop_requested()) {
      bell.poll();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });

  tessera::NodeGraph g("doorbell");
  auto& wait = g.emplace_async([&](tessera::AsyncDone done) {
    std::lock_guard lock(bell.mutex);
    bell.waiting = done;
  }).name("wait for the DMA");
  int used = 0;
  wait.precede(g.emplace([&] { ++used; }).name("use the data"));
  auto run = ex.run(g);
  bell.rung = true;  // the DMA engine finishes
  run.get();
  // DOC progress-example end
  EXPECT_EQ(used, 1);
}
// clang-format on
