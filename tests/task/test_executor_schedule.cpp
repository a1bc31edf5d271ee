// Executor::schedule: caller-owned tasks run exactly once each, whether queued from outside the
// pool or from a worker, and CPU- and GPU-kind tasks both reach a worker.
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

struct Counted : tessera::Job {
  std::atomic<int>* runs = nullptr;
  std::atomic<int>* left = nullptr;
  explicit Counted(tessera::ExecKind kind = tessera::ExecKind::cpu)
      : Job([](Job& self) {
          auto& c = static_cast<Counted&>(self);
          c.runs->fetch_add(1);
          c.left->fetch_sub(1);
        }, kind) {}
};

void wait_until_zero(const std::atomic<int>& left) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (left.load() != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

TEST(ExecutorSchedule, EachTaskRunsOnceFromOutsideThePool) {
  tessera::Executor ex;
  constexpr int n = 20000;
  std::vector<Counted> tasks;
  tasks.reserve(n);
  std::vector<std::atomic<int>> runs(n);
  std::atomic<int> left{n};
  for (int i = 0; i < n; ++i) {
    tasks.emplace_back(i % 3 == 0 ? tessera::ExecKind::gpu : tessera::ExecKind::cpu);
    EXPECT_EQ(tasks[i].job_kind(), i % 3 == 0 ? tessera::ExecKind::gpu : tessera::ExecKind::cpu);
    tasks[i].runs = &runs[i];
    tasks[i].left = &left;
    ex.schedule(tasks[i]);
  }
  wait_until_zero(left);
  ASSERT_EQ(left.load(), 0);
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
}

struct Spawner : tessera::Job {
  tessera::Executor* ex = nullptr;
  std::vector<Counted>* children = nullptr;
  std::atomic<int>* left = nullptr;
  Spawner()
      : Job([](Job& self) {
          auto& s = static_cast<Spawner&>(self);
          EXPECT_GE(s.ex->this_worker_id(), 0);  // it runs on a worker ...
          for (auto& c : *s.children) s.ex->schedule(c);  // ... whose own deque takes these
          s.left->fetch_sub(1);
        }) {}
};

TEST(ExecutorSchedule, TasksQueuedFromAWorkerRun) {
  tessera::Executor ex;
  constexpr int n = 5000;
  std::vector<Counted> children(n);
  std::vector<std::atomic<int>> runs(n);
  std::atomic<int> left{n + 1};
  for (int i = 0; i < n; ++i) {
    children[i].runs = &runs[i];
    children[i].left = &left;
  }
  Spawner s;
  s.ex = &ex;
  s.children = &children;
  s.left = &left;
  ex.schedule(s);
  wait_until_zero(left);
  ASSERT_EQ(left.load(), 0);
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(ExecutorSchedule, DocsExample) {
  tessera::Executor executor;
  // DOC job begin
  struct Hello : tessera::Job {
    std::atomic<int> runs{0};
    Hello() : Job([](tessera::Job& self) { static_cast<Hello&>(self).runs.fetch_add(1); }) {}
  } hello;
  executor.schedule(hello);
  // DOC job end
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (hello.runs.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(hello.runs.load(), 1);
}

}  // namespace
