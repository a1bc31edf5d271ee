// Objects larger in total than a small sim device budget: the memory layer evicts least recently
// used replicas (writing back what only the device held), and every task still sees the right
// values.
#include "task_test_support.hpp"

#include <numeric>
#include <vector>

using namespace tessera;

TEST(TaskEviction, ObjectsBeyondTheDeviceBudgetStayCorrect) {
  SimOptions o;
  o.memory_bytes = std::size_t{8} << 20;
  auto devices = DeviceSet::simulated(2, o);
  TaskRuntimeOptions options;
  options.memory.device_budgets = {std::size_t{1} << 20};  // 1 MiB of replicas per device
  TaskRuntime rt(devices, options);
  constexpr std::size_t n = 32 * 1024, objects = 24;  // 24 x 256 KiB = 6 MiB, 3x both budgets
  std::vector<HeteroObject<double>> xs;
  for (std::size_t k = 0; k < objects; ++k) xs.emplace_back(rt, n, "x" + std::to_string(k));
  auto init = [](const TaskContext&, double* p, double k) {
    for (std::size_t i = 0; i < n; ++i) p[i] = k + static_cast<double>(i);
  };
  auto bump = [](const TaskContext&, double* p) {
    for (std::size_t i = 0; i < n; ++i) p[i] += 1;
  };
  for (std::size_t k = 0; k < objects; ++k)
    rt.submit(native_task("init", TaskKind::gpu, init, tessera::write(xs[k]), static_cast<double>(k)));
  constexpr int rounds = 3;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < objects; ++k) rt.submit(native_task("bump", TaskKind::gpu, bump, tessera::read_write(xs[k])));
  rt.wait_all();
  EXPECT_GT(rt.memory().stats().evictions, 0u);
  EXPECT_GT(rt.memory().stats().bytes_written_back, 0u);
  for (std::size_t k = 0; k < objects; ++k) {
    std::vector<double> out(n);
    auto h = xs[k].copy_to(out.data());
    task_test::finish(h);
    h.get();
    for (std::size_t i = 0; i < n; i += 997) ASSERT_EQ(out[i], static_cast<double>(k + i + rounds)) << "x" << k << "[" << i << "]";
  }
}
