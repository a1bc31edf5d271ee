// Per-task overhead: submit to completion of empty tasks with two arguments (one read_write,
// one read), for a chain on one object, independent tasks on their own objects, and a binary
// reduction tree. Time per task = wall time of the whole shape / tasks.
#include "tasks_bench.hpp"

#include <tessera/task/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tasks_bench {

namespace {

using clock_type = std::chrono::steady_clock;
using tessera::TaskKind;

constexpr auto empty = [](const tessera::TaskContext&, double*, const double*) {};

tessera::Task empty_task(tessera::HeteroObject<double>& rw, tessera::HeteroObject<double>& r) {
  return tessera::native_task("t", TaskKind::cpu, empty, tessera::read_write(rw), tessera::read(r));
}

void write_all(tessera::TaskRuntime& rt, std::vector<tessera::HeteroObject<double>>& objs) {
  for (auto& o : objs)
    rt.submit(tessera::native_task("init", TaskKind::cpu, [](const tessera::TaskContext&, double* p) { *p = 1; },
                                   tessera::write(o)));
  rt.wait_all();
}

template <class F>
double best_ns_per_task(F&& shape, int tasks, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock_type::now();
    shape();
    best = std::min(best, std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / tasks);
  }
  return best;
}

}  // namespace

Shapes tessera_overhead(bool quick) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::TaskRuntime rt(devices);
  const int reps = quick ? 2 : 5;
  Shapes s;
  {
    std::vector<tessera::HeteroObject<double>> xs;
    xs.emplace_back(rt, 1, "x");
    xs.emplace_back(rt, 1, "c");
    write_all(rt, xs);
    s.chain = best_ns_per_task([&] {
      for (int i = 0; i < chain_tasks; ++i) rt.submit(empty_task(xs[0], xs[1]));
      rt.wait_all();
    }, chain_tasks, reps);
  }
  {
    std::vector<tessera::HeteroObject<double>> xs;
    for (int i = 0; i < 2 * independent_tasks; ++i) xs.emplace_back(rt, 1, "o");
    write_all(rt, xs);
    s.independent = best_ns_per_task([&] {
      for (int i = 0; i < independent_tasks; ++i) rt.submit(empty_task(xs[2 * i], xs[2 * i + 1]));
      rt.wait_all();
    }, independent_tasks, reps);
  }
  {
    std::vector<tessera::HeteroObject<double>> v;
    for (int i = 0; i < 2 * tree_leaves; ++i) v.emplace_back(rt, 1, "v");
    write_all(rt, v);
    const int n = 2 * tree_leaves;
    s.tree = best_ns_per_task([&] {
      for (int stride = 1; stride < n; stride *= 2)
        for (int i = 0; i + stride < n; i += 2 * stride) rt.submit(empty_task(v[i], v[i + stride]));
      rt.wait_all();
    }, n - 1, reps * 20);
  }
  return s;
}

}  // namespace tasks_bench
