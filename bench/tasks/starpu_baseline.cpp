// The same three shapes in StarPU (CPU workers, STARPU_RW / STARPU_R), for the same-run baseline.
#include "tasks_bench.hpp"

#if defined(TESSERA_BENCH_STARPU)
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tasks_bench {

namespace {

void empty_cpu(void**, void*) {}

struct Handles {
  std::vector<double> data;
  std::vector<starpu_data_handle_t> h;
  explicit Handles(int n) : data(static_cast<std::size_t>(n), 1.0), h(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i)
      starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&data[i]), sizeof(double));
  }
  ~Handles() {
    for (auto& x : h) starpu_data_unregister(x);
  }
};

template <class F>
double best_ns_per_task(F&& shape, int tasks, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    shape();
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / tasks);
  }
  return best;
}

}  // namespace

bool starpu_overhead(bool quick, Shapes& out) {
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncuda = 0;
  conf.nopencl = 0;
  if (starpu_init(&conf) != 0) return false;
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = empty_cpu;
  cl.nbuffers = 2;
  cl.modes[0] = STARPU_RW;
  cl.modes[1] = STARPU_R;
  const int reps = quick ? 2 : 5;
  auto insert = [&](starpu_data_handle_t a, starpu_data_handle_t b) {
    starpu_task_insert(&cl, STARPU_RW, a, STARPU_R, b, 0);
  };
  {
    Handles x(2);
    out.chain = best_ns_per_task([&] {
      for (int i = 0; i < chain_tasks; ++i) insert(x.h[0], x.h[1]);
      starpu_task_wait_for_all();
    }, chain_tasks, reps);
  }
  {
    Handles x(2 * independent_tasks);
    out.independent = best_ns_per_task([&] {
      for (int i = 0; i < independent_tasks; ++i) insert(x.h[2 * i], x.h[2 * i + 1]);
      starpu_task_wait_for_all();
    }, independent_tasks, reps);
  }
  {
    const int n = 2 * tree_leaves;
    Handles v(n);
    out.tree = best_ns_per_task([&] {
      for (int stride = 1; stride < n; stride *= 2)
        for (int i = 0; i + stride < n; i += 2 * stride) insert(v.h[i], v.h[i + stride]);
      starpu_task_wait_for_all();
    }, n - 1, reps * 20);
  }
  starpu_shutdown();
  return true;
}

}  // namespace tasks_bench
#else
namespace tasks_bench {
bool starpu_overhead(bool, Shapes&) { return false; }
}  // namespace tasks_bench
#endif
