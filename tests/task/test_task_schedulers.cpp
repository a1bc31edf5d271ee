// Each scheduling policy picks the device it promises, with objects placed on known devices.
#include "task_test_support.hpp"

#include <tessera/device/device.hpp>

#include <atomic>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

using namespace tessera;

namespace {

DeviceSet four_sims() {
  SimOptions o;
  o.memory_bytes = std::size_t{16} << 20;
  return DeviceSet::simulated(4, o);
}

/// Writes `x` on accelerator `device`, so that its only valid copy lives there.
template <class T>
void place(HeteroObject<T>& x, std::size_t device, DeviceSet& devices, TaskRuntime& rt) {
  Stream& s = devices.accelerator(device).compute_stream(0);
  void* p = x.buffer().prepare(device + 1, s, Access::write);
  s.enqueue_host([p, n = x.size()] { std::fill_n(static_cast<T*>(p), n, T{1}); });
  x.buffer().finish(device + 1, s, Access::write);
  rt.memory().synchronize();
}

auto read_both = [](const TaskContext&, const double*, const double*) {};

TEST(Schedulers, LocalityPicksTheDeviceHoldingMostInputBytes) {
  auto devices = four_sims();
  TaskRuntimeOptions options;
  options.scheduler = locality_scheduler();
  TaskRuntime rt(devices, options);
  HeteroObject<double> big(rt, 4096, "big"), small(rt, 512, "small");
  place(big, 2, devices, rt);
  place(small, 1, devices, rt);
  auto h = rt.submit(native_task("t", TaskKind::gpu, read_both, tessera::read(big), tessera::read(small)));
  task_test::finish(h);
  EXPECT_EQ(&h.device(), &devices.accelerator(2));
}

TEST(Schedulers, LocalityBreaksTiesByLeastExpectedWait) {
  auto devices = four_sims();
  TaskRuntimeOptions options;
  options.scheduler = locality_scheduler();
  options.dedicated_submit_threads = true;
  TaskRuntime rt(devices, options);
  HeteroObject<double> a(rt, 1024, "a"), b(rt, 1024, "b");
  place(a, 0, devices, rt);
  place(b, 3, devices, rt);
  // Equal bytes on devices 0 and 3; device 0 is busy with a long task, so device 3 wins.
  std::atomic<bool> go{false};
  HeteroObject<double> busy(rt, 8, "busy");
  place(busy, 0, devices, rt);
  auto blocker = rt.submit(native_task("blocker", TaskKind::gpu, [&](const TaskContext&, double*) {
    while (!go.load()) std::this_thread::yield();
  }, tessera::read_write(busy)));
  auto h = rt.submit(native_task("t", TaskKind::gpu, read_both, tessera::read(a), tessera::read(b)));
  go.store(true);
  task_test::finish(h);
  task_test::finish(blocker);
  EXPECT_EQ(&blocker.device(), &devices.accelerator(0));
  EXPECT_EQ(&h.device(), &devices.accelerator(3));
}

TEST(Schedulers, DataAffineWeighsCopiesAgainstQueuedWork) {
  auto devices = four_sims();
  TaskRuntimeOptions options;
  options.scheduler = data_affine_scheduler(1e9);  // 1 GB/s: 8 KiB cost 8 us to move
  TaskRuntime rt(devices, options);
  HeteroObject<double> x(rt, 1024, "x");
  place(x, 1, devices, rt);
  std::atomic<bool> go{false};
  HeteroObject<double> busy(rt, 8, "busy");
  place(busy, 1, devices, rt);
  // Device 1 holds x but has 1 ms of queued work: moving x elsewhere (8 us) is cheaper.
  Task blocker = native_task("blocker", TaskKind::gpu, [&](const TaskContext&, double*) {
    while (!go.load()) std::this_thread::yield();
  }, tessera::read_write(busy));
  blocker.estimate(std::chrono::milliseconds(1));
  auto hb = rt.submit(blocker);
  Task t = native_task("t", TaskKind::gpu, [](const TaskContext&, const double*) {}, tessera::read(x));
  t.estimate(std::chrono::microseconds(1));
  auto h = rt.submit(t);
  go.store(true);
  task_test::finish(h);
  task_test::finish(hb);
  EXPECT_EQ(&hb.device(), &devices.accelerator(1));
  EXPECT_NE(&h.device(), &devices.accelerator(1));
  // With nothing queued, the task stays with its data (on device 1, or where t copied it).
  rt.wait_all();
  Task u = native_task("u", TaskKind::gpu, [](const TaskContext&, const double*) {}, tessera::read(x));
  u.estimate(std::chrono::microseconds(1));
  auto hu = rt.submit(u);
  task_test::finish(hu);
  EXPECT_TRUE(&hu.device() == &devices.accelerator(1) || &hu.device() == &h.device()) << hu.device().name();
}

TEST(Schedulers, FifoRunsInSubmissionOrderOnASingleDevice) {
  auto devices = DeviceSet::simulated(1, SimOptions{});
  TaskRuntimeOptions options;
  options.scheduler = fifo_scheduler();
  options.compute_streams = 1;
  TaskRuntime rt(devices, options);
  std::mutex m;
  std::vector<int> order;
  std::vector<HeteroObject<int>> objs;
  for (int i = 0; i < 50; ++i) objs.emplace_back(rt, 1, "o" + std::to_string(i));
  for (int i = 0; i < 50; ++i)
    rt.submit(native_task("t", TaskKind::gpu, [&, i](const TaskContext&, int*) {
      std::lock_guard lock(m);
      order.push_back(i);
    }, tessera::write(objs[i])));
  rt.wait_all();
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

}  // namespace
