// Implicit dependencies: random sequences of read / write / read_write tasks over a few objects,
// submitted at once, must leave exactly what running them one by one in submission order leaves
// (PREMA §3.1.2). CPU and GPU kinds mix on sim:4, so objects move between the host and devices.
#include "task_test_support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <cstdint>
#include <random>
#include <vector>

using namespace tessera;

namespace {

constexpr std::size_t kObjects = 4, kElems = 16, kArgs = 3;
using Value = std::uint64_t;

struct Op {
  std::array<std::size_t, kArgs> object;
  std::array<Access, kArgs> mode;
  Value seed;
};

// What a task does: every argument that reads contributes its values to `s`; then a write
// argument becomes f(seed, s) and a read_write argument mixes its old values in.
template <class P0, class P1, class P2>
void apply(const Op& op, P0* a, P1* b, P2* c) {
  Value s = op.seed;
  auto fold = [&](auto* p, Access m) {
    if (access_reads(m))
      for (std::size_t j = 0; j < kElems; ++j) s = s * 1099511628211ull + p[j];
  };
  fold(a, op.mode[0]);
  fold(b, op.mode[1]);
  fold(c, op.mode[2]);
  auto store = [&](auto* p, Access m) {
    if constexpr (!std::is_const_v<std::remove_pointer_t<decltype(p)>>) {
      if (m == Access::read) return;  // the sequential model passes every object writable
      for (std::size_t j = 0; j < kElems; ++j)
        p[j] = m == Access::write ? s + j : p[j] * 3 + s + j;
    }
  };
  store(a, op.mode[0]);
  store(b, op.mode[1]);
  store(c, op.mode[2]);
}

template <std::size_t I, class... A>
Task build(const Op& op, TaskKind kind, std::vector<HeteroObject<Value>>& objs, A&&... acc) {
  if constexpr (I == kArgs) {
    return native_task("op", kind, [op](const TaskContext&, auto* a, auto* b, auto* c) { apply(op, a, b, c); },
                       std::forward<A>(acc)...);
  } else {
    auto& o = objs[op.object[I]];
    switch (op.mode[I]) {
      case Access::read:
        return build<I + 1>(op, kind, objs, std::forward<A>(acc)..., tessera::read(o));
      case Access::write:
        return build<I + 1>(op, kind, objs, std::forward<A>(acc)..., tessera::write(o));
      default:
        return build<I + 1>(op, kind, objs, std::forward<A>(acc)..., tessera::read_write(o));
    }
  }
}

void run_sequence(const std::string& backend, unsigned seed, int steps) {
  auto devices = task_test::devices_for(backend);
  TaskRuntime rt(devices);
  std::mt19937 rng(seed);
  std::vector<HeteroObject<Value>> objs;
  std::vector<std::vector<Value>> model(kObjects, std::vector<Value>(kElems));
  for (std::size_t k = 0; k < kObjects; ++k) {
    objs.emplace_back(rt, kElems, "o" + std::to_string(k));
    Value* h = objs[k].request(Access::write).get();
    for (std::size_t j = 0; j < kElems; ++j) h[j] = model[k][j] = k * 100 + j;
    objs[k].release();
  }
  const bool gpus = devices.num_accelerators() > 0;
  std::vector<TaskHandle> handles;
  for (int step = 0; step < steps; ++step) {
    Op op;
    std::vector<std::size_t> pick{0, 1, 2, 3};
    std::shuffle(pick.begin(), pick.end(), rng);
    for (std::size_t i = 0; i < kArgs; ++i) {
      op.object[i] = pick[i];
      op.mode[i] = std::array{Access::read, Access::write, Access::read_write}[rng() % 3];
    }
    op.seed = rng();
    const TaskKind kind = gpus && rng() % 2 == 0 ? TaskKind::gpu : TaskKind::cpu;
    handles.push_back(rt.submit(build<0>(op, kind, objs)));
    apply(op, model[op.object[0]].data(), model[op.object[1]].data(), model[op.object[2]].data());
  }
  for (auto& h : handles) {
    task_test::finish(h);
    h.get();
  }
  for (std::size_t k = 0; k < kObjects; ++k) {
    std::vector<Value> out(kElems);
    auto h = objs[k].copy_to(out.data());
    task_test::finish(h);
    h.get();
    EXPECT_EQ(out, model[k]) << backend << " seed " << seed << " object " << k;
  }
}

class ImplicitDependencies : public ::testing::TestWithParam<const char*> {};

TEST_P(ImplicitDependencies, RandomSequencesMatchSequentialOrder) {
  for (unsigned seed = 1; seed <= 40; ++seed) run_sequence(GetParam(), seed, 60);
}

TEST_P(ImplicitDependencies, LongSequence) { run_sequence(GetParam(), 4242, 2000); }

INSTANTIATE_TEST_SUITE_P(Backends, ImplicitDependencies, ::testing::ValuesIn(task_test::backends));

// Readers since the last writer run together: two readers of one object may overlap.
TEST(ImplicitDependencies, ReadersOfOneObjectRunConcurrently) {
  auto devices = DeviceSet::select("host");
  Executor ex(ExecutorOptions{.gpu_workers = 1, .cpu_workers = 2});
  TaskRuntimeOptions options;
  options.executor = &ex;
  TaskRuntime rt(devices, options);
  HeteroObject<int> x(rt, 1, "x");
  rt.submit(native_task("init", TaskKind::cpu, [](const TaskContext&, int* p) { *p = 1; }, tessera::write(x)));
  std::atomic<int> inside{0}, both{0};
  auto reader = [&](const TaskContext&, const int*) {
    inside.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (inside.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (inside.load() == 2) both.fetch_add(1);
  };
  auto a = rt.submit(native_task("r1", TaskKind::cpu, reader, tessera::read(x)));
  auto b = rt.submit(native_task("r2", TaskKind::cpu, reader, tessera::read(x)));
  task_test::finish(a);
  task_test::finish(b);
  EXPECT_EQ(both.load(), 2);
}

}  // namespace
