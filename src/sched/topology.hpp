#pragma once
// One run (or run_n / run_until series) of a NodeGraph on an Executor.

#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/node_graph.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <future>
#include <mutex>

namespace tessera::detail {

class ExecutorImpl;

struct Topology : Task {
  ExecutorImpl* executor = nullptr;
  NodeGraph* graph = nullptr;
  std::size_t node_count = 0;
  // Nodes of the current iteration not yet finished. Workers subtract in batches.
  alignas(cache_line_size) std::atomic<std::size_t> remaining{0};
  std::size_t runs_left = 0;    // for run_n: further iterations after the current one
  std::function<bool()> stop;   // for run_until: checked before every iteration
  bool grouped = false;         // this iteration replays the graph's captured parts
  std::promise<void> promise;

  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;

  /// Keeps the first failure; later ones are dropped (the run is already being cancelled).
  void record_failure(std::exception_ptr e) {
    std::lock_guard lock(error_mutex);
    if (!error) error = std::move(e);
    failed.store(true, std::memory_order_release);
  }

  /// Checked between iterations: whether to run the graph once more.
  bool run_again() {
    if (stop) return !stop();
    if (runs_left == 0) return false;
    --runs_left;
    return true;
  }
};

}  // namespace tessera::detail
