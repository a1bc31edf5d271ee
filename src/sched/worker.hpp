#pragma once
// A worker thread's state (Ripple §6.2): its priority, its queues, whom it steals from, and
// the node completions it has not yet reported to their graph run.

#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work_stealing_deque.hpp>
#include <tessera/core/trace.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::detail {

class ExecutorImpl;
struct Topology;

class Worker {
public:
  Worker(ExecutorImpl* owner, std::uint32_t index, ExecKind prefers)
      : executor(owner), id(index), priority(prefers), rng_state(0x9E3779B97F4A7C15ull * (index + 1)) {}

  ExecutorImpl* const executor;
  const std::uint32_t id;
  const ExecKind priority;

  WorkStealingDeque<Task*> cpu_queue;
  WorkStealingDeque<Task*> gpu_queue;  // used by GPU-priority workers only

  /// Steal order for the topological strategy, nearest first.
  std::vector<std::uint32_t> victims;
  std::uint64_t rng_state;

  // Completions are reported to a graph run in batches: one atomic subtraction per batch
  // instead of one contended subtraction per node.
  Topology* done_topology = nullptr;
  std::size_t done_count = 0;

  std::mutex trace_mutex;  // uncontended except while a trace is collected
  std::vector<TraceEvent> trace_events;

  // Set when the worker registered itself as spinning before returning to its loop.
  bool counted_as_spinning = false;
  // How deep this worker is in running other tasks while it waits for a loop's helpers.
  unsigned loop_wait_depth = 0;

  // When this worker last polled the ProgressSources between tasks.
  std::chrono::steady_clock::time_point last_progress_poll{};

  int pinned_cpu = -1;
  std::thread thread;

  std::uint64_t next_random() noexcept {
    // xorshift64*: a few cycles and no shared state, enough to pick victims.
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
  }
};

}  // namespace tessera::detail
