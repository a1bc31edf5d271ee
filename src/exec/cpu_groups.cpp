// The kernel engine's CPU backend for Group kernels (exec/detail/cpu_groups.hpp).
#include <tessera/exec/detail/cpu_groups.hpp>
#include <tessera/sched/executor.hpp>

#include <cstddef>
#include <vector>

namespace tessera::detail {

void run_groups(Executor* executor, const Grid& grid, std::size_t shared_bytes,
                void (*group)(void* context, Dim3 id, void* scratch), void* context) {
  const Dim3 g = grid.groups;
  const std::size_t n = g.volume();
  auto run_range = [&](std::size_t begin, std::size_t end) {
    // One scratch region per thread, reused group after group (PREMA: stack memory on CPUs).
    thread_local std::vector<std::max_align_t> scratch;
    const std::size_t words = (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    if (scratch.size() < words) scratch.resize(words);
    for (std::size_t i = begin; i < end; ++i) group(context, Dim3{i % g.x, (i / g.x) % g.y, i / (g.x * g.y)}, scratch.data());
  };
  if (executor == nullptr || n == 1) {
    run_range(0, n);
    return;
  }
  struct Range {
    decltype(run_range)* f;
  } r{&run_range};
  const LoopPlan plan = executor->plan_loop(0, n, 1);
  executor->run_loop(plan, [](void* c, std::size_t, std::size_t lo, std::size_t hi) { (*static_cast<Range*>(c)->f)(lo, hi); }, &r);
}

}  // namespace tessera::detail
