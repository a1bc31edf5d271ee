// Failures and bad input: a task's exception reaches its handle, tasks that depend on it report
// the failure instead of running on bad data, and every misuse is a tessera::Error that says
// what was wrong.
#include "task_test_support.hpp"

#include <tessera/task/task_error.hpp>

#include <atomic>
#include <stdexcept>

using namespace tessera;

namespace {

using task_test::error_of;

class Failures : public ::testing::TestWithParam<const char*> {};

TEST_P(Failures, AnExceptionReachesTheHandleAndTheTasksThatDependOnIt) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  HeteroObject<int> x(rt, 4, "x"), y(rt, 4, "y");
  rt.submit(native_task("init", kind, [](const TaskContext&, int* p) { std::fill_n(p, 4, 1); }, tessera::write(x)));
  auto bad = rt.submit(native_task("bad", kind, [](const TaskContext&, int*) { throw std::runtime_error("boom"); },
                                   tessera::read_write(x)));
  std::atomic<int> ran{0};
  auto after = rt.submit(native_task("after", kind, [&](const TaskContext&, const int*, int*) { ran++; },
                                     tessera::read(x), tessera::write(y)));
  auto later = rt.submit(native_task("later", TaskKind::cpu, [&](const TaskContext&, const int*) { ran++; }, tessera::read(y)));
  task_test::finish(later);
  EXPECT_TRUE(bad.failed());
  EXPECT_TRUE(after.failed());
  EXPECT_TRUE(later.failed());
  EXPECT_EQ(ran.load(), 0);
  try {
    bad.get();
    FAIL() << "no exception";
  } catch (const TaskError& e) {
    EXPECT_EQ(e.node_name(), "bad");
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  }
  try {
    later.get();
    FAIL() << "no exception";
  } catch (const TaskError& e) {
    EXPECT_EQ(e.node_name(), "bad");
    EXPECT_NE(std::string(e.what()).find("task 'later' did not run"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  }
  // An independent task is unaffected, and a new writer starts afresh.
  auto fresh = rt.submit(native_task("fresh", kind, [](const TaskContext&, int* p) { std::fill_n(p, 4, 7); }, tessera::write(x)));
  fresh.get();
  std::vector<int> v(4);
  x.copy_to(v.data()).get();
  EXPECT_EQ(v, std::vector<int>(4, 7));
}

TEST_P(Failures, AFailureInAnExplicitPredecessorIsReported) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  Task a = native_task("a", TaskKind::cpu, [](const TaskContext&) { throw std::runtime_error("first"); });
  Task b = native_task("b", TaskKind::cpu, [](const TaskContext&) {});
  b.add_dependency(a);
  rt.submit(a);
  auto hb = rt.submit(b);
  task_test::finish(hb);
  EXPECT_THROW(hb.get(), TaskError);
}

TEST_P(Failures, ReadingAnObjectNeverWrittenFailsTheTask) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 4, "fresh");
  auto h = rt.submit(native_task("reader", TaskKind::cpu, [](const TaskContext&, const int*) {}, tessera::read(x)));
  task_test::finish(h);
  const std::string what = error_of([&] { h.get(); });
  EXPECT_NE(what.find("never written"), std::string::npos) << what;
}

TEST_P(Failures, AnotherUnitsErrorThrownInsideATaskIsThatTasksFailure) {
  // TaskError is the executor's NodeError: a graph's failure escaping a task body (here made by
  // hand) must still name the task, and keep the graph's error as the original.
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  HeteroObject<int> x(rt, 4, "x");
  auto outer = rt.submit(native_task("outer", kind, [](const TaskContext&, int*) {
    throw NodeError("inner", std::make_exception_ptr(std::runtime_error("deep")), "node 'inner' threw: deep");
  }, tessera::write(x)));
  try {
    outer.get();
    FAIL() << "no exception";
  } catch (const NodeError& e) {
    EXPECT_EQ(e.node_name(), "outer");
    EXPECT_NE(std::string(e.what()).find("task 'outer' failed: node 'inner' threw: deep"), std::string::npos) << e.what();
    try {
      std::rethrow_exception(e.original());
    } catch (const NodeError& inner) {
      EXPECT_EQ(inner.node_name(), "inner");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Failures, ::testing::ValuesIn(task_test::backends));

TEST(BadInput, AGpuTaskWithoutAnAccelerator) {
  auto devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  const std::string what =
      error_of([&] { rt.submit(native_task("needs-gpu", TaskKind::gpu, [](const TaskContext&) {})); });
  EXPECT_NE(what.find("'needs-gpu' is TaskKind::gpu"), std::string::npos) << what;
  EXPECT_NE(what.find("no accelerator"), std::string::npos) << what;
}

TEST(BadInput, DestroyedAndMovedFromObjects) {
  auto devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 4, "x");
  x.destroy();
  std::string what = error_of([&] { (void)tessera::read(x); });
  EXPECT_NE(what.find("'x' was destroyed"), std::string::npos) << what;
  what = error_of([&] { (void)x.request(Access::read); });
  EXPECT_NE(what.find("'x' was destroyed"), std::string::npos) << what;
  what = error_of([&] { x.destroy(); });
  EXPECT_NE(what.find("'x' was destroyed"), std::string::npos) << what;

  HeteroObject<int> y(rt, 4, "y");
  HeteroObject<int> z = std::move(y);
  what = error_of([&] { (void)tessera::write(y); });
  EXPECT_NE(what.find("'y' is used after it was moved from"), std::string::npos) << what;
  EXPECT_NO_THROW((void)tessera::write(z));
}

TEST(BadInput, ReleaseWithoutRequestAndRequestTwice) {
  auto devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 4, "x");
  std::string what = error_of([&] { x.release(); });
  EXPECT_NE(what.find("release() without a host access"), std::string::npos) << what;
  (void)x.request(Access::write).get();
  what = error_of([&] { (void)x.request(Access::read); });
  EXPECT_NE(what.find("while the host still holds"), std::string::npos) << what;
  x.release();
  what = error_of([&] { x.release(); });
  EXPECT_NE(what.find("release() without a host access"), std::string::npos) << what;
  what = error_of([&] { (void)x.request(false, false); });
  EXPECT_NE(what.find("asks for no access"), std::string::npos) << what;
}

TEST(BadInput, WrongElementTypeSizeOrCount) {
  auto devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  AnyObject f = AnyObject::of<float>(rt, 16, "f");
  AnyObject raw(rt, 16, 2, typeid(void), "raw2");
  HeteroObject<double> d(rt, 16, "d");
  auto takes_double = [](const TaskContext&, double*) {};
  std::string what = error_of([&] { (void)native_task("t", TaskKind::cpu, takes_double, tessera::write(f)); });
  EXPECT_NE(what.find("argument 0 (object 'f', 16 elements of float)"), std::string::npos) << what;
  EXPECT_NE(what.find("points to double"), std::string::npos) << what;
  auto takes_const_float = [](const TaskContext&, const float*) {};
  what = error_of([&] { (void)native_task("t", TaskKind::cpu, takes_const_float, tessera::read_write(f)); });
  EXPECT_NE(what.find("pointer to const"), std::string::npos) << what;
  auto takes_void = [](const TaskContext&, void*) {};
  EXPECT_NO_THROW((void)native_task("t", TaskKind::cpu, takes_void, tessera::write(raw)));
  auto takes_short = [](const TaskContext&, short*) {};
  what = error_of([&] { (void)native_task("t", TaskKind::cpu, takes_short, tessera::write(raw)); });
  EXPECT_NE(what.find("points to short"), std::string::npos) << what;
  what = error_of([&] { (void)native_task("t", TaskKind::cpu, takes_double, tessera::write(d, 17)); });
  EXPECT_NE(what.find("smaller than the 17 elements"), std::string::npos) << what;
  EXPECT_NO_THROW((void)native_task("t", TaskKind::cpu, takes_double, tessera::write(d, 16)));
  auto takes_two = [](const TaskContext&, const double*, double*) {};
  what = error_of([&] { (void)native_task("t", TaskKind::cpu, takes_two, tessera::read(d), tessera::write(d)); });
  EXPECT_NE(what.find("'d' is passed twice"), std::string::npos) << what;
  EXPECT_NE(what.find("with read_write"), std::string::npos) << what;
  // Two reads of one object: the hint is one read, not read_write.
  auto reads_two = [](const TaskContext&, const double*, const double*) {};
  what = error_of([&] { (void)native_task("t", TaskKind::cpu, reads_two, tessera::read(d), tessera::read(d)); });
  EXPECT_NE(what.find("pass it once, with read, and use the one pointer"), std::string::npos) << what;
  EXPECT_EQ(what.find("read_write"), std::string::npos) << what;
  // A correctly typed AnyObject runs.
  auto fill = [](const TaskContext&, float* p) { p[3] = 2.5f; };
  rt.submit(native_task("fill", TaskKind::cpu, fill, tessera::write(f))).get();
  float out[16] = {};
  rt.submit(native_task("read", TaskKind::cpu, [&out](const TaskContext&, const float* p) { out[3] = p[3]; },
                        tessera::read(f))).get();
  EXPECT_EQ(out[3], 2.5f);
}

TEST(BadInput, TasksSubmittedTwiceOrEmpty) {
  auto devices = DeviceSet::select("host");
  TaskRuntime rt(devices);
  Task t = native_task("once", TaskKind::cpu, [](const TaskContext&) {});
  rt.submit(t).get();
  std::string what = error_of([&] { rt.submit(t); });
  EXPECT_NE(what.find("'once' was submitted already"), std::string::npos) << what;
  what = error_of([&] { t.add_dependency(t); });
  EXPECT_NE(what.find("itself"), std::string::npos) << what;
  what = error_of([&] { rt.submit(Task{}); });
  EXPECT_NE(what.find("the Task is empty"), std::string::npos) << what;
  what = error_of([&] { (void)kernel_task("k", TaskKind::cpu, Grid{{0}, {4}}, [](const Group&) {}); });
  EXPECT_NE(what.find("is empty"), std::string::npos) << what;
  what = error_of([&] { (void)TaskHandle{}.done(); });
  EXPECT_NE(what.find("TaskHandle is empty"), std::string::npos) << what;
}

TEST(BadInput, ObjectsOfAnotherRuntime) {
  auto devices = DeviceSet::select("host");
  TaskRuntime a(devices), b(devices);
  HeteroObject<int> x(a, 4, "x");
  const std::string what =
      error_of([&] { b.submit(native_task("t", TaskKind::cpu, [](const TaskContext&, int*) {}, tessera::write(x))); });
  EXPECT_NE(what.find("belongs to another TaskRuntime"), std::string::npos) << what;
}

}  // namespace
