#pragma once
// Executor: the one pool of worker threads in a process. It runs NodeGraphs (run, run_n,
// run_until) with heterogeneous work stealing (Ripple §6) and CPU parallel loops on the same
// workers. The scheduler itself is compiled into libtessera; only the thin loop templates
// below are instantiated in user code.

#include <tessera/sched/detail/parallel_loop.hpp>
#include <tessera/sched/job.hpp>
#include <tessera/sched/node_graph.hpp>
#include <tessera/sched/steal_strategy.hpp>
#include <tessera/core/trace.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <vector>

namespace tessera {

namespace detail {
class ExecutorImpl;
}

struct ExecutorOptions {
  /// Devices the executor will drive; GPU-priority workers default to devices + 1.
  std::size_t num_devices = 0;
  /// Workers that prefer GPU-kind work (0: num_devices + 1). They own a CPU and a GPU queue.
  std::size_t gpu_workers = 0;
  /// Workers that run CPU work only (unset: the hardware threads left after the GPU workers).
  std::optional<std::size_t> cpu_workers;
  StealStrategy steal_strategy = StealStrategy::round_robin;
  /// How long an idle worker keeps looking for work before it sleeps. Short enough that an idle
  /// process costs no CPU; long enough that back-to-back launches find workers awake.
  std::chrono::microseconds spin_before_sleep{200};
  /// Bind each worker to one core (always on for the topological strategy).
  bool pin_workers = false;
  /// A parallel loop whose first chunk shows the whole loop would take less than this runs on
  /// the calling thread alone: handing chunks to another core costs a cache-line round trip
  /// (~0.1-0.5 us), more than such a loop gains. 0 always uses the workers.
  std::chrono::nanoseconds inline_loops_below{2000};
};

/// Runs graphs and parallel loops.
///
///   tessera::Executor ex;                        // devices + 1 GPU workers, the rest CPU
///   auto f = ex.run_n(graph, 100);               // returns at once
///   f.get();                                     // rethrows a node's exception as NodeError
///   ex.parallel_for(0, n, [&](std::size_t i) { y[i] += a * x[i]; });
class Executor {
public:
  Executor();
  explicit Executor(const ExecutorOptions& options);
  /// Waits for every running graph, then stops the workers.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Runs the graph once.
  std::future<void> run(NodeGraph& graph);
  /// Runs the graph n times in a row (n == 0 returns a ready future).
  std::future<void> run_n(NodeGraph& graph, std::size_t n);
  /// Runs the graph until `stop()` returns true; `stop` is checked before every run.
  std::future<void> run_until(NodeGraph& graph, std::function<bool()> stop);
  /// Blocks until every graph started on this executor has finished.
  void wait_for_all();

  /// Queues a Job to run once on a worker of its kind's priority. The cheap entry point for
  /// dynamic front ends (the task layer submits each ready task this way); no graph, allocation
  /// or future is involved. The caller owns the job, keeps it alive until it has run, and tracks
  /// its completion itself (wait_for_all does not wait for it). Thread safe; from a worker it
  /// goes to that worker's own deque.
  ///
  ///   struct Hello : tessera::Job {
  ///     Hello() : Job([](tessera::Job&) { std::puts("hi"); }) {}
  ///   } hello;
  ///   executor.schedule(hello);
  void schedule(Job& job);

  std::size_t num_workers() const noexcept;
  std::size_t num_gpu_workers() const noexcept;
  std::size_t num_cpu_workers() const noexcept;
  StealStrategy steal_strategy() const noexcept;
  /// Index of the calling thread among this executor's workers, or -1 for other threads.
  int this_worker_id() const noexcept;

  /// Starts recording a trace of every node executed from now on.
  void start_trace();
  /// Stops recording and returns what was recorded.
  Trace stop_trace();

  /// Calls `body(i)` for every i in [begin, end) on the worker pool; the caller takes part.
  /// `grain` is the smallest chunk handed to one worker (0: chosen from the range and workers).
  template <class Body>
  void parallel_for(std::size_t begin, std::size_t end, Body&& body, std::size_t grain = 0) {
    if (end <= begin) return;
    detail::LoopPlan plan = plan_loop(begin, end, grain);
    auto run_chunk = [](void* ctx, std::size_t, std::size_t lo, std::size_t hi) {
      auto& f = *static_cast<std::remove_reference_t<Body>*>(ctx);
      for (std::size_t i = lo; i < hi; ++i) f(i);
    };
    run_loop(plan, run_chunk, const_cast<void*>(static_cast<const void*>(std::addressof(body))));
  }

  /// Reduces over [begin, end): `body(i, acc)` folds element i into a chunk's accumulator
  /// (started at `identity`), then `combine(a, b)` joins the chunks' results in chunk order,
  /// so a given range and executor always give the same answer.
  ///
  ///   double s = ex.parallel_reduce(0, n, 0.0, [&](std::size_t i, double& acc) { acc += x[i]; },
  ///                                 std::plus<>{});
  template <class T, class Body, class Combine>
  T parallel_reduce(std::size_t begin, std::size_t end, T identity, Body&& body, Combine&& combine,
                    std::size_t grain = 0) {
    if (end <= begin) return identity;
    detail::LoopPlan plan = plan_loop(begin, end, grain);
    struct Context {
      std::remove_reference_t<Body>* body;
      std::vector<T>* partials;
    };
    std::vector<T> partials(plan.count, identity);
    Context ctx{std::addressof(body), &partials};
    auto run_chunk = [](void* c, std::size_t chunk, std::size_t lo, std::size_t hi) {
      auto& cx = *static_cast<Context*>(c);
      T acc = (*cx.partials)[chunk];
      for (std::size_t i = lo; i < hi; ++i) (*cx.body)(i, acc);
      (*cx.partials)[chunk] = std::move(acc);
    };
    run_loop(plan, run_chunk, &ctx);
    T result = std::move(identity);
    for (auto& p : partials) result = combine(std::move(result), std::move(p));
    return result;
  }

  /// How parallel loops cut [begin, end) on this executor.
  detail::LoopPlan plan_loop(std::size_t begin, std::size_t end, std::size_t grain) const noexcept;
  /// Runs every chunk of `plan` on the pool with the caller taking part; rethrows the first
  /// exception a chunk threw.
  void run_loop(const detail::LoopPlan& plan, detail::ChunkBody body, void* context);

private:
  std::unique_ptr<detail::ExecutorImpl> impl_;
};

/// The process-wide executor, created on first use with default options.
Executor& default_executor();

/// parallel_for on the default executor.
template <class Body>
void parallel_for(std::size_t begin, std::size_t end, Body&& body, std::size_t grain = 0) {
  default_executor().parallel_for(begin, end, std::forward<Body>(body), grain);
}

/// parallel_reduce on the default executor.
template <class T, class Body, class Combine>
T parallel_reduce(std::size_t begin, std::size_t end, T identity, Body&& body, Combine&& combine,
                  std::size_t grain = 0) {
  return default_executor().parallel_reduce(begin, end, std::move(identity), std::forward<Body>(body),
                                            std::forward<Combine>(combine), grain);
}

}  // namespace tessera
