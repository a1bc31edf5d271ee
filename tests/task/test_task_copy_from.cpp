// HeteroObject::copy_from, the mirror of copy_to: the copy is a writer in the object's
// dependency order; with TaskKind::gpu it goes straight from user memory to an accelerator and
// GPU tasks that follow find the data there; bad input is a clear error.
#include "task_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/task/task.hpp>

#include <atomic>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

using namespace tessera;

namespace {

class CopyFrom : public ::testing::TestWithParam<const char*> {};

TEST_P(CopyFrom, ATaskThatFollowsReadsTheCopiedValues) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const bool accelerators = devices.num_accelerators() > 0;
  const TaskKind kind = accelerators ? TaskKind::gpu : TaskKind::cpu;
  for (TaskKind where : {TaskKind::cpu, kind}) {
    HeteroObject<double> x(rt, 1000, "x");
    std::vector<double> in(1000);
    std::iota(in.begin(), in.end(), 0.5);
    x.copy_from(in.data(), where);
    rt.submit(native_task("twice", kind, [](const TaskContext&, double* p) {
      for (int i = 0; i < 1000; ++i) p[i] *= 2;
    }, tessera::read_write(x)));
    std::vector<double> out(1000);
    TaskHandle done = x.copy_to(out.data());
    task_test::finish(done);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], 2 * in[i]) << "element " << i;
  }
}

TEST_P(CopyFrom, WaitsForTheTasksThatReadTheOldValues) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 64, "x"), y(rt, 64, "y");
  std::vector<int> first(64, 1), second(64, 2);
  x.copy_from(first.data());
  std::atomic<bool> reader_started{false};
  rt.submit(native_task("slow copy", TaskKind::cpu, [&](const TaskContext&, const int* p, int* q) {
    reader_started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::copy_n(p, 64, q);
  }, tessera::read(x), tessera::write(y)));
  TaskHandle overwrite = x.copy_from(second.data());  // must not overtake the reader
  task_test::finish(overwrite);
  EXPECT_TRUE(reader_started.load());
  std::vector<int> got_y(64), got_x(64);
  task_test::finish(y.copy_to(got_y.data()));
  task_test::finish(x.copy_to(got_x.data()));
  EXPECT_EQ(got_y, first);
  EXPECT_EQ(got_x, second);
}

TEST_P(CopyFrom, WaitsForAHostHold) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 16, "x");
  std::vector<int> ones(16, 1), sevens(16, 7);
  x.copy_from(ones.data());
  const int* h = x.request(Access::read).get();
  TaskHandle c = x.copy_from(sevens.data());
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(c.done()) << "copy_from ran while the host held the object";
  EXPECT_EQ(h[3], 1);
  x.release();
  task_test::finish(c);
  std::vector<int> got(16);
  task_test::finish(x.copy_to(got.data()));
  EXPECT_EQ(got, sevens);
}

INSTANTIATE_TEST_SUITE_P(Backends, CopyFrom, ::testing::ValuesIn(task_test::backends));

// One accelerator, so the GPU task must run where the copy went: no Buffer transfer at all, and
// the host copy never becomes valid. Through the host copy the same task needs one upload.
TEST(CopyFromAccelerator, SkipsTheHostCopy) {
  for (TaskKind where : {TaskKind::gpu, TaskKind::cpu}) {
    auto devices = task_test::devices_for("sim:1");
    TaskRuntime rt(devices);
    HeteroObject<float> x(rt, 4096, "x");
    std::vector<float> in(4096, 1.5f);
    x.copy_from(in.data(), where);
    task_test::finish(rt.submit(native_task("inc", TaskKind::gpu, [](const TaskContext&, float* p) {
      for (int i = 0; i < 4096; ++i) p[i] += 1;
    }, tessera::read_write(x))));
    const auto moved = rt.memory().stats().transferred;
    if (where == TaskKind::gpu) {
      EXPECT_EQ(moved.total(), 0u);
      EXPECT_FALSE(x.buffer().valid_rows(0).overlaps(x.buffer().all())) << "the host copy was written";
    } else {
      EXPECT_EQ(moved.host_to_device, 4096 * sizeof(float));
    }
    std::vector<float> out(4096);
    task_test::finish(x.copy_to(out.data()));
    EXPECT_EQ(out, std::vector<float>(4096, 2.5f));
  }
}

// The accelerator that already holds part of the object gets the copy.
TEST(CopyFromAccelerator, GoesWhereTheObjectAlreadyIs) {
  auto devices = task_test::devices_for("sim:3");
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 256, "x");
  std::vector<int> in(256, 4);
  // Place x on sim:2 by hand through its Buffer (space 3), as code mixing graphs and tasks may.
  Stream& s = devices.accelerator(2).compute_stream(0);
  x.buffer().prepare(3, s, Access::write);
  x.buffer().finish(3, s, Access::write);
  s.synchronize();
  task_test::finish(x.copy_from(in.data(), TaskKind::gpu));
  EXPECT_TRUE(x.buffer().valid_rows(3).contains(x.buffer().all()));
  EXPECT_FALSE(x.buffer().valid_rows(1).overlaps(x.buffer().all()));
  EXPECT_FALSE(x.buffer().valid_rows(2).overlaps(x.buffer().all()));
}

// To an accelerator the source is read into staging before the handle is done, and the device
// copy follows in stream order: the handle does not wait for a copy modelled to take 2 s, the
// source may then be overwritten and freed (ASan would see a late read), and a task that
// follows still sees the copied values because it waits for the copy on the device.
TEST(CopyFromAccelerator, TheSourceIsFreeOnceTheHandleIsDone) {
  SimOptions slow;
  slow.memory_bytes = std::size_t{64} << 20;
  slow.copy_latency = std::chrono::seconds(2);
  auto devices = DeviceSet::simulated(1, slow);
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 1000, "x");
  auto in = std::make_unique<std::vector<int>>(1000);
  std::iota(in->begin(), in->end(), 7);
  TaskHandle copied = x.copy_from(in->data(), TaskKind::gpu);
  // 1.5 s: well under the modelled copy, well over any scheduling delay on a loaded CI machine.
  EXPECT_TRUE(copied.wait_for(std::chrono::milliseconds(1500))) << "copy_from waited for the device copy";
  task_test::finish(copied);
  std::fill(in->begin(), in->end(), -1);
  in.reset();
  task_test::finish(rt.submit(native_task("inc", TaskKind::gpu, [](const TaskContext&, int* p) {
    for (int i = 0; i < 1000; ++i) p[i] += 1;
  }, tessera::read_write(x))));
  std::vector<int> out(1000), want(1000);
  std::iota(want.begin(), want.end(), 8);
  task_test::finish(x.copy_to(out.data()));
  EXPECT_EQ(out, want);
}

TEST(CopyFromDocs, InputsStraightToADevice) {
  auto devices = task_test::devices_for("sim:2");
  TaskRuntime rt(devices);
  const std::size_t n = 1024;
  // DOC tasks-copy-from begin
  std::vector<double> in(n, 1.0), out(n);
  tessera::HeteroObject<double> x(rt, n, "x");
  x.copy_from(in.data(), tessera::TaskKind::gpu);  // one copy, to a device; keep `in` until done
  rt.submit(tessera::native_task("scale", tessera::TaskKind::gpu,
      [n](const tessera::TaskContext&, double* p) { for (std::size_t i = 0; i < n; ++i) p[i] *= 2; },
      tessera::read_write(x)));
  x.copy_to(out.data()).get();                     // every out[i] is 2.0
  // DOC tasks-copy-from end
  EXPECT_EQ(out, std::vector<double>(n, 2.0));
}

// Each misuse is a tessera::Error that names the object and what was wrong.
TEST(CopyFromErrors, BadInputIsAClearError) {
  auto devices = task_test::devices_for("host");
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 4, "weights");
  std::vector<int> in(4, 1);
  using task_test::error_of;
  EXPECT_NE(error_of([&] { x.copy_from(nullptr); }).find("'weights': copy_from(nullptr)"), std::string::npos);
  EXPECT_NE(error_of([&] { x.copy_from(in.data(), TaskKind::gpu); }).find("have no accelerator"), std::string::npos);
  x.destroy();
  EXPECT_NE(error_of([&] { x.copy_from(in.data()); }).find("weights"), std::string::npos);
}

}  // namespace
