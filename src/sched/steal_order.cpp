// Victim order for the topological steal strategy and pinning workers to cores. With hwloc,
// victims sharing a deeper cache come first; without it, the order falls back to round robin.

#include "../core/log_internal.hpp"
#include "executor_impl.hpp"

#include <algorithm>
#include <numeric>

#if defined(TESSERA_HAVE_HWLOC)
#include <hwloc.h>
#endif

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace tessera::detail {

namespace {

#if defined(TESSERA_HAVE_HWLOC)
// Depth of the deepest object (cache, core, package) two processing units share.
std::vector<std::vector<int>> shared_depths(std::size_t workers, std::vector<int>& pu_of_worker) {
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  const int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  std::vector<std::vector<int>> depth(workers, std::vector<int>(workers, 0));
  pu_of_worker.assign(workers, -1);
  if (npu > 0) {
    for (std::size_t i = 0; i < workers; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i % npu));
      pu_of_worker[i] = static_cast<int>(pu->os_index);
    }
    for (std::size_t i = 0; i < workers; ++i)
      for (std::size_t j = 0; j < workers; ++j) {
        hwloc_obj_t a = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i % npu));
        hwloc_obj_t b = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(j % npu));
        depth[i][j] = hwloc_get_common_ancestor_obj(topo, a, b)->depth;
      }
  }
  hwloc_topology_destroy(topo);
  return depth;
}
#endif

}  // namespace

void ExecutorImpl::assign_steal_order() {
  const std::size_t n = workers_.size();
  for (auto& w : workers_) {
    w->victims.clear();
    for (std::size_t k = 1; k < n; ++k) w->victims.push_back(static_cast<std::uint32_t>((w->id + k) % n));
  }
  if (options_.steal_strategy != StealStrategy::topological) {
    if (options_.pin_workers)
      for (auto& w : workers_) w->pinned_cpu = static_cast<int>(w->id % std::max(1u, std::thread::hardware_concurrency()));
    return;
  }
#if defined(TESSERA_HAVE_HWLOC)
  std::vector<int> pu;
  auto depth = shared_depths(n, pu);
  for (auto& w : workers_) {
    w->pinned_cpu = pu[w->id];
    // Deeper common ancestor = nearer; ties keep round-robin order so thieves spread out.
    std::stable_sort(w->victims.begin(), w->victims.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return depth[w->id][a] > depth[w->id][b]; });
  }
#else
  log_warn("topological stealing needs hwloc, which this build lacks; stealing round robin instead");
#endif
}

void ExecutorImpl::pin_current_thread(Worker& w) {
  if (w.pinned_cpu < 0) return;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(w.pinned_cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    log_warn("could not pin worker {} to CPU {}; it runs unpinned", w.id, w.pinned_cpu);
#endif
}

}  // namespace tessera::detail
