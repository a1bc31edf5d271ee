// Explicit dependencies mixed with inferred ones, and the host's request/release: while the
// host holds an object, tasks that conflict with the hold wait, and every other task runs.
#include "task_test_support.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace tessera;

namespace {

class Holds : public ::testing::TestWithParam<const char*> {};

// DOC tasks-explicit begin
TEST_P(Holds, ExplicitAndImplicitDependenciesMix) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  HeteroObject<int> x(rt, 4, "x"), y(rt, 4, "y");
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  std::mutex m;
  std::vector<std::string> order;
  auto note = [&](const char* what) {
    std::lock_guard lock(m);
    order.emplace_back(what);
  };
  Task a = native_task("a", kind, [&](const TaskContext&, int* p) { note("a"); std::fill_n(p, 4, 1); }, tessera::write(x));
  Task b = native_task("b", TaskKind::cpu, [&](const TaskContext&, int* q) { note("b"); std::fill_n(q, 4, 2); }, tessera::write(y));
  Task c = native_task("c", kind, [&](const TaskContext&, const int* p, int* q) {
    note("c");
    for (int i = 0; i < 4; ++i) q[i] += p[i];
  }, tessera::read(x), tessera::read_write(y));  // inferred: after a (x) and b (y)
  Task d = native_task("d", TaskKind::cpu, [&](const TaskContext&) { note("d"); });
  b.add_dependency(a);  // explicit: b touches nothing of a's
  d.add_dependency(c);  // explicit: d has no arguments at all
  rt.submit(b);         // b may be submitted before a: it waits for a all the same
  rt.submit(a);
  rt.submit(c);
  TaskHandle last = rt.submit(d);
  last.get();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "d"}));
  const int* v = y.request(Access::read).get();
  EXPECT_EQ(std::vector<int>(v, v + 4), std::vector<int>(4, 3));
  y.release();
}
// DOC tasks-explicit end

TEST_P(Holds, AHostHoldHoldsBackConflictingTasksAndNothingElse) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  HeteroObject<int> x(rt, 8, "x"), other(rt, 8, "other");
  rt.submit(native_task("init", kind, [](const TaskContext&, int* p, int* q) {
    std::fill_n(p, 8, 5);
    std::fill_n(q, 8, 0);
  }, tessera::write(x), tessera::write(other)));

  int* h = x.request(Access::read_write).get();  // after init: it waits for the writer
  EXPECT_EQ(h[0], 5);
  auto reader = rt.submit(native_task("reader", kind, [](const TaskContext&, const int* p, int* q) { q[0] = p[0]; },
                                      tessera::read(x), tessera::write(other)));
  HeteroObject<int> free(rt, 8, "free");
  auto unrelated = rt.submit(native_task("unrelated", kind, [](const TaskContext&, int* p) { std::fill_n(p, 8, 1); },
                                         tessera::write(free)));
  task_test::finish(unrelated);  // not held back
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(reader.done()) << "a reader of x ran while the host held it for read_write";
  h[0] = 42;  // the host's write, seen by the reader after release
  x.release();
  task_test::finish(reader);
  reader.get();
  const int* o = other.request(Access::read).get();
  EXPECT_EQ(o[0], 42);
  other.release();
}

TEST_P(Holds, AReadHoldLetsReadersRunAndHoldsBackWriters) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  HeteroObject<int> x(rt, 8, "x"), out(rt, 8, "out");
  int* w = x.request(false, true).get();  // PREMA's request(read = false, write = true)
  std::fill_n(w, 8, 7);
  x.release();
  const int* h = x.request(true, false).get();
  auto reader = rt.submit(native_task("reader", kind, [](const TaskContext&, const int* p, int* q) { q[0] = p[0]; },
                                      tessera::read(x), tessera::write(out)));
  auto writer = rt.submit(native_task("writer", kind, [](const TaskContext&, int* p) { p[0] = 9; }, tessera::write(x)));
  task_test::finish(reader);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(writer.done()) << "a writer of x ran while the host held it for reading";
  EXPECT_EQ(h[0], 7);
  x.release();
  task_test::finish(writer);
  writer.get();
  std::vector<int> v(8);
  x.copy_to(v.data()).get();
  EXPECT_EQ(v[0], 9);
  out.copy_to(v.data()).get();
  EXPECT_EQ(v[0], 7);
}

TEST_P(Holds, ReleaseBeforeTheFutureIsReadyWaitsForTheGrant) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  HeteroObject<double> x(rt, 1000, "x");
  auto f = x.request(Access::write);
  x.release();  // the hold was granted in its turn, then released
  double* p = f.get();
  EXPECT_NE(p, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Backends, Holds, ::testing::ValuesIn(task_test::backends));

}  // namespace
