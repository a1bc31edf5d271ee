// Worker roles (Ripple §6.2): GPU-priority workers own a GPU queue; CPU-priority workers never
// run GPU-kind work. Idle workers sleep instead of spinning.
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace tessera;

TEST(Workers, DefaultCountsFollowDevices) {
  ExecutorOptions opt;
  opt.num_devices = 2;
  Executor ex(opt);
  EXPECT_EQ(ex.num_gpu_workers(), 3u);
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(ex.num_cpu_workers(), hw > 3 ? hw - 3 : 0);
  EXPECT_EQ(ex.num_workers(), ex.num_gpu_workers() + ex.num_cpu_workers());

  Executor plain;
  EXPECT_EQ(plain.num_gpu_workers(), 1u);
  EXPECT_EQ(plain.steal_strategy(), StealStrategy::round_robin);
  EXPECT_EQ(plain.this_worker_id(), -1);
}

TEST(Workers, GpuKindNodesRunOnlyOnGpuPriorityWorkersCpuNodesAnywhere) {
  ExecutorOptions opt;
  opt.gpu_workers = 2;
  opt.cpu_workers = 3;
  Executor ex(opt);
  NodeGraph g("mixed");
  std::mutex m;
  std::set<int> gpu_ran_on, cpu_ran_on;
  std::vector<Node*> layer;
  for (int i = 0; i < 400; ++i) {
    bool gpu = i % 3 == 0;
    auto& n = g.emplace([&, gpu] {
      int id = ex.this_worker_id();
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      std::lock_guard lock(m);
      (gpu ? gpu_ran_on : cpu_ran_on).insert(id);
    });
    n.kind(gpu ? ExecKind::gpu : ExecKind::cpu);
    if (i >= 20) layer[static_cast<std::size_t>(i - 20)]->precede(n);  // CPU and GPU nodes depend on each other
    layer.push_back(&n);
  }
  ex.run_n(g, 3).get();
  ASSERT_FALSE(gpu_ran_on.empty());
  for (int id : gpu_ran_on) EXPECT_LT(id, 2) << "GPU-kind node ran on CPU-priority worker " << id;
  for (int id : cpu_ran_on) EXPECT_GE(id, 0);
}

namespace {
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
}  // namespace

TEST(Workers, IdleWorkersSleepInsteadOfSpinning) {
  ExecutorOptions opt;
  opt.cpu_workers = 3;
  Executor ex(opt);
  NodeGraph g;
  for (int i = 0; i < 100; ++i) g.emplace([] {});
  ex.run(g).get();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin window
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const double used = process_cpu_seconds() - before;
  // Four spinning workers would burn ~1.6 CPU-seconds here; sleeping ones next to nothing.
  EXPECT_LT(used, 0.1) << "idle workers used " << used << " s of CPU in 0.4 s";
  // And they wake up for new work.
  std::atomic<int> n{0};
  NodeGraph h;
  for (int i = 0; i < 1000; ++i) h.emplace([&] { n.fetch_add(1); });
  ex.run(h).get();
  EXPECT_EQ(n.load(), 1000);
}

TEST(Workers, PinnedWorkersRunWork) {
  ExecutorOptions opt;
  opt.pin_workers = true;
  Executor ex(opt);
  std::atomic<long> s{0};
  ex.parallel_for(0, 10000, [&](std::size_t i) { s.fetch_add(static_cast<long>(i), std::memory_order_relaxed); });
  EXPECT_EQ(s.load(), 9999L * 10000 / 2);
}

// Regression: a lone worker that finishes an iteration queues the next one's sources in its own
// deque; it must run them instead of going to sleep on them.
TEST(Workers, SingleWorkerRunsRepeatedGraphs) {
  ExecutorOptions opt;
  opt.gpu_workers = 1;
  opt.cpu_workers = 0;
  Executor ex(opt);
  ASSERT_EQ(ex.num_workers(), 1u);
  NodeGraph g("solo");
  std::atomic<int> n{0};
  for (int i = 0; i < 1000; ++i) g.emplace([&] { n.fetch_add(1, std::memory_order_relaxed); });
  ex.run_n(g, 20).get();
  EXPECT_EQ(n.load(), 20000);
  int count = 0;
  ex.run_until(g, [&] { return ++count > 5; }).get();
  EXPECT_EQ(n.load(), 25000);
}
