#pragma once
// The scheduler behind tessera::Executor: heterogeneous work stealing (Ripple §6, Algorithms
// 1–4) with the changes recorded in docs/design/0001-executor.md.

#include "idle_notifier.hpp"
#include "injection_queue.hpp"
#include "topology.hpp"
#include "worker.hpp"

#include <tessera/sched/executor.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <vector>

namespace tessera::detail {

struct CaptureGroup;

class ExecutorImpl {
public:
  explicit ExecutorImpl(const ExecutorOptions& options);
  ~ExecutorImpl();

  std::future<void> launch(NodeGraph& graph, std::size_t runs, std::function<bool()> stop);
  void wait_for_all();
  /// Executor::schedule (executor_schedule.cpp).
  void schedule(Task* task);

  LoopPlan plan_loop(std::size_t begin, std::size_t end, std::size_t grain) const noexcept;
  void run_loop(const LoopPlan& plan, ChunkBody body, void* context);

  /// Entry point of AsyncDone and of device nodes' stream callbacks: finishes an asynchronous
  /// or device node from any thread.
  void complete_async(Node* node, std::exception_ptr error);

  void start_trace();
  Trace stop_trace();

  std::size_t num_workers() const noexcept { return workers_.size(); }
  std::size_t num_gpu_workers() const noexcept { return gpu_workers_; }
  StealStrategy steal_strategy() const noexcept { return options_.steal_strategy; }
  /// Polls the registered ProgressSources from a worker (see progress.hpp).
  bool poll_progress() noexcept;
  /// poll_progress() when 50 us have passed since this worker's last poll.
  void poll_between_tasks(Worker& w) noexcept;
  /// The calling thread's Worker if it belongs to this executor.
  Worker* current_worker() const noexcept;

  /// The Task::execute of every Node.
  static void execute_node(Task* task, Worker* worker);
  /// The Task::execute of a captured part of a graph (CaptureGroup).
  static void execute_group(Task* task, Worker* worker);

private:
  static void execute_launch(Task* task, Worker* worker);
  static void execute_loop_helper(Task* task, Worker* worker);

  void worker_loop(Worker& w);
  Task* pop_local(Worker& w) noexcept;
  Task* steal_round(Worker& w) noexcept;
  Task* steal_from_victims(Worker& w, bool gpu_queues) noexcept;
  Task* wait_for_work(Worker& w);
  bool work_queued() const noexcept;

  void run_node(Node* node, Worker& w);
  /// Records a captured part if it has no recording yet (or a stale one), then launches it; it
  /// finishes through group_done once its first stream gets past the launch.
  void run_group(CaptureGroup* g, Worker& w);
  void record_group(CaptureGroup& g);
  /// Whether g's recording may be replayed now: its effects checked in recording order.
  static bool replay_ready(const CaptureGroup& g);
  void group_done(CaptureGroup* g);
  /// Releases the part's successors and counts its nodes finished.
  void finish_group(CaptureGroup* g, Worker* w);
  /// Takes one of the predecessor edges of `s` away; queues it (or its part) once none are left.
  /// Returns the node when it is ready and the caller may run it itself.
  Node* release(Node* s, Topology* topo, bool& pushed_cpu, bool& pushed_gpu, Worker* w, bool may_keep);
  /// Runs a device node's body and releases its device successors; returns one this worker can
  /// run next. The node finishes (CPU successors, completion count) once its stream gets there.
  Node* issue_device_node(Node* node, Topology* topo, Worker& w);
  /// Which successors complete_node releases: a device node releases its device successors
  /// when its work is enqueued and the rest when that work has run.
  enum class Successors : std::uint8_t { all, device, host };
  /// Releases the node's successors; returns one this worker can run next, if any. Counts the
  /// node finished unless only its device successors are released.
  Node* complete_node(Node* node, Topology* topo, Worker* w, Successors which = Successors::all);
  /// Puts a ready task where it will run; the caller notifies sleepers.
  void enqueue(Task* t, Worker* w);
  void count_done(Topology* topo, Worker* w, std::size_t nodes = 1);
  void flush_done(Worker& w);
  void finish_iteration(Topology* topo, Worker* w);
  void schedule_sources(Topology* topo, Worker* w);
  void retire(Topology* topo);

  void record_trace(Worker& w, const Node& node, std::chrono::steady_clock::time_point begin);
  void record_trace(Worker& w, std::string label, ExecKind kind, std::chrono::steady_clock::time_point begin);
  void assign_steal_order();
  void pin_current_thread(Worker& w);

  ExecutorOptions options_;
  std::size_t gpu_workers_ = 0;
  std::size_t loop_participants_ = 1;
  std::chrono::steady_clock::duration clock_overhead_{};
  std::vector<std::unique_ptr<Worker>> workers_;
  InjectionQueue cpu_injection_;
  InjectionQueue gpu_injection_;
  // One per worker priority (index by ExecKind); see idle_notifier.hpp.
  std::unique_ptr<IdleNotifier> notifiers_[2];
  std::atomic<int> spin_budget_used_{0};
  IdleNotifier& notifier_of(const Worker& w) noexcept { return *notifiers_[static_cast<int>(w.priority)]; }
  /// Announces newly queued work of the given kinds.
  void notify(bool cpu_work, bool gpu_work) noexcept;
  std::atomic<bool> stop_{false};

  std::mutex topologies_mutex_;
  std::condition_variable topologies_done_;
  std::size_t active_topologies_ = 0;

  // Held while a captured part records or launches: a stream records for one capture at a time,
  // and a launch onto a stream that another part is recording would be recorded into it.
  std::mutex capture_mutex_;

  std::atomic<bool> tracing_{false};
  std::chrono::steady_clock::time_point trace_origin_;
};

}  // namespace tessera::detail
