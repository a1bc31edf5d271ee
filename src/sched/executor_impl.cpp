#include "executor_impl.hpp"

#include "capture_group.hpp"
#include "device_binding.hpp"

#include "../core/log_internal.hpp"
#include "../device/submit_work.hpp"
#include "loop_job.hpp"
#include "progress_sources.hpp"
#include "../core/trace_sources.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/capture.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>
#include <tessera/sched/progress.hpp>

#include <algorithm>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TESSERA_CPU_RELAX() _mm_pause()
#else
#define TESSERA_CPU_RELAX() std::this_thread::yield()
#endif

namespace tessera::detail {

namespace {

thread_local Worker* this_thread_worker = nullptr;

std::size_t hardware_threads() noexcept {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// The cost of reading the clock twice, taken off loop timings.
std::chrono::steady_clock::duration measure_clock_overhead() {
  auto best = std::chrono::steady_clock::duration::max();
  for (int i = 0; i < 64; ++i) {
    auto a = std::chrono::steady_clock::now();
    auto b = std::chrono::steady_clock::now();
    best = std::min(best, b - a);
  }
  return best;
}

std::exception_ptr node_failure(const Node& node, std::exception_ptr e) {
  const std::string what = describe_exception(e);
  return std::make_exception_ptr(NodeError(node.name(), std::move(e), "node '" + node.name() + "' threw: " + what));
}

}  // namespace

ExecutorImpl::ExecutorImpl(const ExecutorOptions& options) : options_(options) {
  const std::size_t hw = hardware_threads();
  gpu_workers_ = options.gpu_workers != 0 ? options.gpu_workers : options.num_devices + 1;
  const std::size_t cpu_workers = options.cpu_workers.value_or(hw > gpu_workers_ ? hw - gpu_workers_ : 0);
  if (gpu_workers_ + cpu_workers > 4096)
    throw Error("ExecutorOptions asks for " + std::to_string(gpu_workers_ + cpu_workers) +
                " workers; at most 4096 are supported");

  const std::size_t total = gpu_workers_ + cpu_workers;
  loop_participants_ = std::max<std::size_t>(1, std::min(total + 1, hw));
  // Leave a core to the thread that produces work (the caller of run or parallel_for).
  clock_overhead_ = measure_clock_overhead();
  const int spinners = static_cast<int>(std::min(total, hw > 1 ? hw - 1 : 1));
  for (auto& n : notifiers_) n = std::make_unique<IdleNotifier>(spin_budget_used_, spinners);
  workers_.reserve(total);
  for (std::size_t i = 0; i < total; ++i)
    workers_.push_back(std::make_unique<Worker>(this, static_cast<std::uint32_t>(i),
                                                i < gpu_workers_ ? ExecKind::gpu : ExecKind::cpu));
  assign_steal_order();
  for (auto& w : workers_) w->thread = std::thread([this, wp = w.get()] { worker_loop(*wp); });
  log_debug("executor started: {} GPU-priority and {} CPU-priority workers, {} stealing", gpu_workers_, cpu_workers,
            to_string(options.steal_strategy));
}

ExecutorImpl::~ExecutorImpl() {
  wait_for_all();
  stop_.store(true, std::memory_order_release);
  for (auto& n : notifiers_) n->wake_all();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

}  // namespace tessera::detail

namespace tessera {
// Here, where the thread's worker identity lives. Inside a poll that identity is cleared, and so
// a wait there counts nothing twice.
BlockedWorker::BlockedWorker() noexcept : counted_(detail::this_thread_worker != nullptr) {
  if (counted_) detail::worker_leaves();
}
BlockedWorker::~BlockedWorker() {
  if (counted_) detail::worker_attends();
}
}  // namespace tessera

namespace tessera::detail {

bool ExecutorImpl::poll_progress() noexcept {
  // Completions found here release nodes through the queues, never inline: a node run inside a
  // source's poll would keep the source (its lock, its other completions) for the node's whole
  // run. Without a worker identity, every executor's completion path queues and notifies.
  Worker* self = std::exchange(this_thread_worker, nullptr);
  const bool progressed = poll_progress_sources();
  this_thread_worker = self;
  return progressed;
}

Worker* ExecutorImpl::current_worker() const noexcept {
  Worker* w = this_thread_worker;
  return (w != nullptr && w->executor == this) ? w : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Graph runs

std::future<void> ExecutorImpl::launch(NodeGraph& graph, std::size_t runs, std::function<bool()> stop) {
  if (graph.running_.exchange(true, std::memory_order_acq_rel))
    throw Error("Executor::run: graph '" + graph.name() +
                "' is already running; wait on the future of its current run before starting it again");
  auto topo = std::make_unique<Topology>();
  try {
    graph.prepare_for_run();
    bool nothing_to_do = stop ? stop() : runs == 0;
    if (nothing_to_do) {
      graph.running_.store(false, std::memory_order_release);
      std::promise<void> ready;
      ready.set_value();
      return ready.get_future();
    }
  } catch (...) {
    graph.running_.store(false, std::memory_order_release);
    throw;
  }

  topo->execute = &ExecutorImpl::execute_launch;
  topo->exec_kind = ExecKind::cpu;
  topo->executor = this;
  topo->graph = &graph;
  topo->node_count = graph.nodes_.size();
  topo->remaining.store(topo->node_count, std::memory_order_relaxed);
  topo->runs_left = stop ? 0 : runs - 1;
  topo->stop = std::move(stop);
  for (auto& n : graph.nodes_) n->topology_ = topo.get();
  for (auto& g : graph.groups_) g->topology = topo.get();
  topo->grouped = graph.next_run_grouped();
  std::future<void> future = topo->promise.get_future();
  {
    std::lock_guard lock(topologies_mutex_);
    ++active_topologies_;
  }
  Topology* t = topo.release();
  if (Worker* w = current_worker()) {
    schedule_sources(t, w);
  } else {
    // A worker fans the sources out from its own deque; pushing thousands of sources through
    // the locked injection queue would serialise the launch.
    cpu_injection_.push(t);
    notify(true, false);
  }
  return future;
}

void ExecutorImpl::execute_launch(Task* task, Worker* worker) {
  auto* topo = static_cast<Topology*>(task);
  worker->executor->schedule_sources(topo, worker);
}

void ExecutorImpl::schedule_sources(Topology* topo, Worker* w) {
  bool cpu = false, gpu = false;
  auto start = [&](Task* s) {
    // Read the kind first: once queued, a source may run, the run finish and the graph be
    // destroyed before enqueue returns (no uncounted node keeps this run alive here).
    (s->exec_kind == ExecKind::gpu ? gpu : cpu) = true;
    enqueue(s, w);
  };
  if (topo->grouped) {
    for (Task* s : topo->graph->grouped_sources_) start(s);
  } else {
    for (Node* s : topo->graph->sources_) start(s);
  }
  notify(cpu, gpu);
}

void ExecutorImpl::notify(bool cpu_work, bool gpu_work) noexcept {
  // CPU work: the CPU group, or the GPU group (which also runs CPU work) when nobody in the
  // CPU group can take it. GPU work: only the GPU group can.
  bool gpu_told = false;
  if (cpu_work && !notifiers_[static_cast<int>(ExecKind::cpu)]->notify_work()) {
    notifiers_[static_cast<int>(ExecKind::gpu)]->notify_work();
    gpu_told = true;
  }
  if (gpu_work && !gpu_told) notifiers_[static_cast<int>(ExecKind::gpu)]->notify_work();
}

void ExecutorImpl::enqueue(Task* t, Worker* w) {
  if (w == nullptr) {
    (t->exec_kind == ExecKind::gpu ? gpu_injection_ : cpu_injection_).push(t);
  } else if (t->exec_kind == ExecKind::cpu) {
    w->cpu_queue.push(t);
  } else if (w->priority == ExecKind::gpu) {
    w->gpu_queue.push(t);
  } else {
    gpu_injection_.push(t);
  }
}

void ExecutorImpl::execute_node(Task* task, Worker* worker) {
  worker->executor->run_node(static_cast<Node*>(task), *worker);
}

void ExecutorImpl::run_node(Node* node, Worker& w) {
  while (node != nullptr) {
    Topology* topo = node->topology_;
    // Restore the count for the next run now: every predecessor has already reported.
    node->pending_.store(node->num_predecessors_, std::memory_order_relaxed);
    if (node->device_ && !topo->failed.load(std::memory_order_acquire)) {
      node = issue_device_node(node, topo, w);
      continue;
    }
    if (!topo->failed.load(std::memory_order_acquire)) {
      const bool async = node->work_.is_async();
      if (async) {
        node->finished_.store(false, std::memory_order_relaxed);
        node->async_holds_.store(2, std::memory_order_relaxed);  // the body's and the token's
      }
      const bool tracing = tracing_.load(std::memory_order_relaxed);
      const auto begin = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      try {
        node->work_.invoke(*node);
      } catch (...) {
        topo->record_failure(node_failure(*node, std::current_exception()));
        // The token will not fire for a body that threw before handing it on; if it did hand
        // it on, its later complete() is ignored.
        if (async && !node->finished_.exchange(true, std::memory_order_acq_rel))
          node->async_holds_.fetch_sub(1, std::memory_order_acq_rel);
      }
      if (tracing) record_trace(w, *node, begin);
      if (async && node->async_holds_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // the token finishes it
    }
    node = complete_node(node, topo, &w);
  }
}

Node* ExecutorImpl::issue_device_node(Node* node, Topology* topo, Worker& w) {
  DeviceBinding& d = *node->device_;
  node->async_holds_.store(2, std::memory_order_relaxed);  // the issuing worker's and the stream's
  const bool tracing = tracing_.load(std::memory_order_relaxed);
  const auto begin = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  bool issued = false;
  try {
    // Device-side waits: the stream, not this worker, waits for work on other streams. A body
    // that throws has what it enqueued drained first, so the failed run's future does not
    // become ready while its device work still touches the caller's data.
    std::function<void()> on_complete;
    if (!d.completes_at_issue) on_complete = [node] { node->topology_->executor->complete_async(node, nullptr); };
    if (auto recorded = submit_work(*d.stream, d.waits, [node](Stream&) { node->work_.invoke(*node); },
                                    std::move(on_complete), node->name(), d.records_event))
      d.issued = std::move(*recorded);
    issued = true;
  } catch (...) {
    topo->record_failure(node_failure(*node, std::current_exception()));
  }
  if (tracing) record_trace(w, *node, begin);
  if (!issued || d.completes_at_issue) return complete_node(node, topo, &w);

  Node* next = complete_node(node, topo, &w, Successors::device);
  if (node->async_holds_.fetch_sub(1, std::memory_order_acq_rel) != 1) return next;  // the stream finishes it
  // The stream got there first: finish here. Two successors may now be ready; run one, queue one.
  Node* other = complete_node(node, topo, &w, Successors::host);
  if (next == nullptr) return other;
  if (other != nullptr) {
    const bool gpu = other->kind() == ExecKind::gpu;
    enqueue(other, &w);
    notify(!gpu, gpu);
  }
  return next;
}

Node* ExecutorImpl::release(Node* s, Topology* topo, bool& pushed_cpu, bool& pushed_gpu, Worker* w, bool may_keep) {
  if (topo->grouped && s->group_ != nullptr) {
    CaptureGroup* g = s->group_;
    if (g->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      enqueue(g, w);
      pushed_gpu = true;
    }
    return nullptr;
  }
  if (s->pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) return nullptr;
  // Run one ready successor straight away (no deque round trip, warm caches); queue the rest.
  if (may_keep && w != nullptr && (s->kind() == ExecKind::cpu || w->priority == ExecKind::gpu)) return s;
  enqueue(s, w);
  (s->kind() == ExecKind::gpu ? pushed_gpu : pushed_cpu) = true;
  return nullptr;
}

Node* ExecutorImpl::complete_node(Node* node, Topology* topo, Worker* w, Successors which) {
  Node* next = nullptr;
  bool pushed_cpu = false, pushed_gpu = false;
  for (Node* s : node->successors_) {
    if (which != Successors::all && (s->device_ != nullptr) != (which == Successors::device)) continue;
    if (Node* ready = release(s, topo, pushed_cpu, pushed_gpu, w, next == nullptr)) next = ready;
  }
  if (pushed_cpu || pushed_gpu) notify(pushed_cpu, pushed_gpu);
  // Not before: once counted, the run may finish and the graph be destroyed.
  if (which != Successors::device) count_done(topo, w);
  return next;
}

// ---------------------------------------------------------------------------------------------
// Captured parts

void ExecutorImpl::execute_group(Task* task, Worker* worker) {
  worker->executor->run_group(static_cast<CaptureGroup*>(task), *worker);
}

bool ExecutorImpl::replay_ready(const CaptureGroup& g) {
  ReplayCheck check;  // allocates only for the buffers the effects name
  return std::all_of(g.effects.begin(), g.effects.end(), [&](const auto& e) { return e->ready(check); });
}

void ExecutorImpl::run_group(CaptureGroup* g, Worker& w) {
  Topology* topo = g->topology;
  g->pending.store(g->external_predecessors, std::memory_order_relaxed);  // for the next run
  if (topo->failed.load(std::memory_order_acquire)) {
    finish_group(g, &w);
    return;
  }
  const bool tracing = tracing_.load(std::memory_order_relaxed);
  const auto begin = tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  // A replay's data must be where the recording found it (not evicted, not written elsewhere
  // since): otherwise record again, which moves it.
  const bool recording = g->work == nullptr || g->stale || !replay_ready(*g);
  g->holds.store(2, std::memory_order_relaxed);  // this worker's and the stream's
  bool launched = false;
  try {
    std::lock_guard lock(capture_mutex_);
    if (recording) record_group(*g);
    Stream& origin = *g->streams[0];
    origin.device().make_current();
    try {
      g->work->launch();
      if (!recording)
        for (const auto& e : g->effects) e->replayed(origin);
    } catch (...) {
      std::rethrow_exception(node_failure(*g->nodes[0], std::current_exception()));
    }
    origin.then([g] { g->topology->executor->group_done(g); });
    launched = true;
  } catch (...) {
    topo->record_failure(std::current_exception());
  }
  if (tracing) {
    const std::string what = recording ? "record+launch " : "launch ";
    record_trace(w, what + g->nodes[0]->name() + " (" + std::to_string(g->nodes.size()) + " captured)", ExecKind::gpu,
                 begin);
  }
  if (launched && g->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // the stream finishes it
  finish_group(g, &w);
}

void ExecutorImpl::record_group(CaptureGroup& g) {
  std::unique_ptr<StreamCapture> capture;
  try {
    g.streams[0]->device().make_current();
    capture = g.streams[0]->begin_capture(std::span<Stream* const>(g.streams.data() + 1, g.streams.size() - 1));
  } catch (...) {
    std::rethrow_exception(node_failure(*g.nodes[0], std::current_exception()));
  }
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node* n = g.nodes[k];
    try {
      capture->label(n->name());
      n->device_->issued =
          *submit_work(*n->device_->stream, g.waits[k], [n](Stream&) { n->work_.invoke(*n); }, {}, n->name(), true);
    } catch (...) {
      std::rethrow_exception(node_failure(*n, std::current_exception()));  // the capture is dropped
    }
  }
  try {
    g.work = capture->finish(std::move(g.work));
    g.effects = capture->take_effects();
  } catch (...) {
    g.work.reset();
    g.effects.clear();
    std::rethrow_exception(node_failure(*g.nodes[0], std::current_exception()));
  }
  g.topology->graph->recordings_.fetch_add(1, std::memory_order_relaxed);
  if (std::string why = capture->spoiled(); !why.empty()) {
    // Right for this run only: launched once, then the graph runs uncaptured.
    g.stale = true;
    g.topology->graph->spoil_capture("part from node '" + g.nodes[0]->name() + "': " + why);
    return;
  }
  g.stale = false;
}

void ExecutorImpl::group_done(CaptureGroup* g) {
  std::string label;
  if (std::exception_ptr error = g->work->take_error(label)) {
    const std::string what = describe_exception(error);
    g->topology->record_failure(std::make_exception_ptr(
        NodeError(label, std::move(error), "node '" + label + "' (replayed from its capture) threw: " + what)));
  }
  if (g->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // the launching worker finishes it
  finish_group(g, current_worker());
}

void ExecutorImpl::finish_group(CaptureGroup* g, Worker* w) {
  Topology* topo = g->topology;
  bool pushed_cpu = false, pushed_gpu = false;
  for (Node* s : g->successors) (void)release(s, topo, pushed_cpu, pushed_gpu, w, false);
  if (pushed_cpu || pushed_gpu) notify(pushed_cpu, pushed_gpu);
  count_done(topo, w, g->nodes.size());
}

void ExecutorImpl::complete_async(Node* node, std::exception_ptr error) {
  Topology* topo = node->topology_;
  if (error)
    topo->record_failure(node_failure(*node, error));
  if (node->async_holds_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // the body is still running
  Worker* w = current_worker();
  Node* next = complete_node(node, topo, w, node->device_ ? Successors::host : Successors::all);
  if (next != nullptr) run_node(next, *w);
}


void ExecutorImpl::count_done(Topology* topo, Worker* w, std::size_t nodes) {
  if (w == nullptr) {
    if (topo->remaining.fetch_sub(nodes, std::memory_order_acq_rel) == nodes) finish_iteration(topo, nullptr);
    return;
  }
  if (w->done_topology != topo) {
    flush_done(*w);
    w->done_topology = topo;
  }
  w->done_count += nodes;
}

void ExecutorImpl::flush_done(Worker& w) {
  if (w.done_count == 0) return;
  Topology* topo = w.done_topology;
  const std::size_t n = w.done_count;
  w.done_count = 0;
  w.done_topology = nullptr;
  if (topo->remaining.fetch_sub(n, std::memory_order_acq_rel) == n) finish_iteration(topo, &w);
}

void ExecutorImpl::finish_iteration(Topology* topo, Worker* w) {
  bool again = false;
  if (!topo->failed.load(std::memory_order_acquire)) {
    try {
      again = topo->run_again();
    } catch (...) {
      topo->record_failure(std::make_exception_ptr(
          Error("run_until: the stop predicate of graph '" + topo->graph->name() +
                "' threw: " + describe_exception(std::current_exception()))));
    }
  }
  if (again) {
    topo->remaining.store(topo->node_count, std::memory_order_relaxed);
    topo->grouped = topo->graph->next_run_grouped();
    if (w != nullptr) {
      schedule_sources(topo, w);
    } else {
      cpu_injection_.push(topo);
      notify(true, false);
    }
    return;
  }
  retire(topo);
}

void ExecutorImpl::retire(Topology* topo) {
  std::unique_ptr<Topology> owned(topo);
  std::promise<void> promise = std::move(topo->promise);
  std::exception_ptr error = topo->error;
  NodeGraph* graph = topo->graph;
  graph->running_.store(false, std::memory_order_release);
  graph->running_.notify_all();
  // From here on the caller may destroy the graph: touch nothing of it.
  if (error)
    promise.set_exception(error);
  else
    promise.set_value();
  owned.reset();
  std::lock_guard lock(topologies_mutex_);
  if (--active_topologies_ == 0) topologies_done_.notify_all();
}

void ExecutorImpl::wait_for_all() {
  std::unique_lock lock(topologies_mutex_);
  topologies_done_.wait(lock, [this] { return active_topologies_ == 0; });
}

// ---------------------------------------------------------------------------------------------
// Workers

void ExecutorImpl::worker_loop(Worker& w) {
  this_thread_worker = &w;
  pin_current_thread(w);
  worker_attends();
  struct Leaves {
    ~Leaves() { worker_leaves(); }
  } leaves;
  for (;;) {
    Task* t = pop_local(w);
    if (t == nullptr) {
      t = wait_for_work(w);
      if (t == nullptr) return;
    } else if (w.counted_as_spinning) {
      w.counted_as_spinning = false;
      notifier_of(w).found_work(false);
    }
    t->execute(t, &w);
    poll_between_tasks(w);
  }
}

void ExecutorImpl::poll_between_tasks(Worker& w) noexcept {
  // A worker that never runs out of work never reaches its idle polls, and a message that a
  // later task (or another rank) waits for must not wait for the queue to drain, nor take a
  // progress thread's context switch away from this worker's tasks.
  constexpr auto interval = std::chrono::microseconds(50);
  if (!progress_sources_registered()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - w.last_progress_poll < interval) return;
  w.last_progress_poll = now;
  poll_progress();
}

Task* ExecutorImpl::pop_local(Worker& w) noexcept {
  if (w.priority == ExecKind::gpu)
    if (Task* t = w.gpu_queue.pop()) return t;
  return w.cpu_queue.pop();
}

Task* ExecutorImpl::steal_round(Worker& w) noexcept {
  if (w.priority == ExecKind::gpu) {
    if (Task* t = gpu_injection_.pop()) return t;
    if (Task* t = steal_from_victims(w, true)) return t;
  }
  if (Task* t = cpu_injection_.pop()) return t;
  return steal_from_victims(w, false);
}

Task* ExecutorImpl::steal_from_victims(Worker& w, bool gpu_queues) noexcept {
  const std::size_t n = gpu_queues ? gpu_workers_ : workers_.size();
  if (n <= 1 && w.id < n) return nullptr;
  auto take = [&](std::size_t v) -> Task* {
    if (v == w.id || v >= n) return nullptr;
    Worker& victim = *workers_[v];
    return gpu_queues ? victim.gpu_queue.steal() : victim.cpu_queue.steal();
  };
  switch (options_.steal_strategy) {
    case StealStrategy::round_robin:
      for (std::size_t k = 1; k <= n; ++k)
        if (Task* t = take((w.id + k) % n)) return t;
      break;
    case StealStrategy::random:
      for (std::size_t k = 0; k < n; ++k)
        if (Task* t = take(w.next_random() % n)) return t;
      break;
    case StealStrategy::topological:
      for (std::uint32_t v : w.victims)
        if (Task* t = take(v)) return t;
      break;
  }
  return nullptr;
}

Task* ExecutorImpl::wait_for_work(Worker& w) {
  using clock = std::chrono::steady_clock;
  IdleNotifier& notifier = notifier_of(w);
  bool may_spin = w.counted_as_spinning || notifier.begin_spinning();
  w.counted_as_spinning = false;
  for (;;) {
    const auto deadline = clock::now() + options_.spin_before_sleep;
    for (unsigned round = 1; may_spin; ++round) {
      if (Task* t = steal_round(w)) {
        notifier.found_work(work_queued());
        return t;
      }
      if (round == 1) {
        // Report completions only once stealing fails, so a thief's stay batched. Reporting
        // may finish a run and queue the next iteration's sources in this worker's deque.
        flush_done(w);
        if (Task* t = pop_local(w)) {
          notifier.found_work(work_queued());
          return t;
        }
      }
      if (stop_.load(std::memory_order_acquire)) {
        notifier.stop_spinning();
        return nullptr;
      }
      // What this worker waits for may be a message or an event that only a poll completes.
      if (round % 16 == 0 && poll_progress()) {
        w.last_progress_poll = clock::now();
        continue;  // it may have queued work: look at once
      }
      if (round % 16 == 0 && clock::now() > deadline) break;
      // Look often (a pause is ~40-140 cycles; new work should be seen within ~100 ns) and
      // yield now and then: on an oversubscribed machine the thread that will produce the
      // work may be waiting for this core.
      if (round % 64 == 0) {
        std::this_thread::yield();
      } else {
        TESSERA_CPU_RELAX();
        TESSERA_CPU_RELAX();
      }
    }
    flush_done(w);  // when spinning was skipped; never sleep on unreported completions
    if (Task* t = pop_local(w)) {
      notifier.found_work(work_queued());
      return t;
    }
    const std::uint32_t epoch = notifier.prepare_sleep();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (Task* t = steal_round(w)) {
      notifier.cancel_sleep();
      notifier.found_work(work_queued());
      return t;
    }
    if (stop_.load(std::memory_order_acquire)) {
      notifier.cancel_sleep();
      notifier.stop_spinning();
      return nullptr;
    }
    worker_leaves();
    notifier.commit_sleep(epoch);
    worker_attends();
    may_spin = true;  // woken for work: look for it
  }
}

bool ExecutorImpl::work_queued() const noexcept {
  if (cpu_injection_.size() != 0 || gpu_injection_.size() != 0) return true;
  for (auto& v : workers_)
    if (!v->cpu_queue.empty() || !v->gpu_queue.empty()) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Parallel loops

namespace {
// An iteration at least this long is timed well enough by one clock reading to extrapolate.
constexpr std::chrono::nanoseconds kTimeableIteration{500};
}  // namespace

LoopPlan ExecutorImpl::plan_loop(std::size_t begin, std::size_t end, std::size_t grain) const noexcept {
  LoopPlan plan;
  plan.begin = begin;
  plan.end = end;
  const std::size_t n = end - begin;
  // Eight chunks per participant balance uneven iterations without much counter traffic.
  const std::size_t target_chunks = loop_participants_ * 8;
  std::size_t chunk = (n + target_chunks - 1) / target_chunks;
  plan.chunk = std::max<std::size_t>({chunk, grain, 1});
  plan.count = (n + plan.chunk - 1) / plan.chunk;
  return plan;
}

void ExecutorImpl::run_loop(const LoopPlan& plan, ChunkBody body, void* context) {
  Worker* w = current_worker();
  // A loop as long as a whole block (a Jacobi3D block: 0.8 ms) is one task, and polls only
  // between tasks left a message that another rank waited for unprogressed that long: a large
  // send moves a pipeline of fragments only while its sender polls, so the waiting rank got
  // its faces 5-10 ms late. Between chunks (about an eighth of the loop per participant) the
  // worker polls as it does between tasks, at most every 50 us.
  auto between_chunks = [this, w] {
    if (w != nullptr) poll_between_tasks(*w);
  };
  const std::size_t helpers = std::min(plan.count - 1, loop_participants_ - 1);
  if (helpers == 0) {
    for (std::size_t c = 0; c < plan.count; ++c) {
      body(context, c, plan.chunk_begin(c), plan.chunk_end(c));
      between_chunks();
    }
    return;
  }
  // Run the start of chunk 0 in growing pieces, timed, until it shows either that the whole
  // loop is cheaper than a trip to another core (then it all runs here) or that it is not
  // (then the helpers go out at once, so a large loop is not held back by the probe).
  std::size_t probed = plan.chunk_begin(0);
  const std::size_t first_end = plan.chunk_end(0);
  const std::size_t total = plan.end - plan.begin;
  const auto start = std::chrono::steady_clock::now();
  bool worth_helpers = options_.inline_loops_below.count() == 0;
  // The first iteration goes alone: one that takes long enough to time (a kernel's row,
  // microseconds) decides at once. With 64 of them in the first piece, the probe ran 1/16 of a
  // loop of rows before waking anyone (FORCE flux over 1024^2 cells: about 6% of its time).
  // Shorter ones are too close to the clock's noise to extrapolate from, so pieces of 64 and
  // more decide, as before.
  std::size_t piece = 64;
  for (bool first = true; !worth_helpers && probed < first_end; first = false) {
    const std::size_t to = std::min(first_end, probed + (first ? 1 : piece));
    body(context, 0, probed, to);
    probed = to;
    auto elapsed = std::chrono::steady_clock::now() - start - clock_overhead_;
    if (first && elapsed < kTimeableIteration) continue;
    const double estimate = static_cast<double>(std::max<std::int64_t>(0, elapsed.count())) *
                            static_cast<double>(total) / static_cast<double>(probed - plan.begin);
    worth_helpers = estimate >= static_cast<double>(options_.inline_loops_below.count());
    if (!first) piece *= 4;
  }
  if (!worth_helpers) {
    for (std::size_t c = 1; c < plan.count; ++c) {
      body(context, c, plan.chunk_begin(c), plan.chunk_end(c));
      between_chunks();
    }
    return;
  }

  LoopJob& job = LoopJobPool::for_this_thread().acquire();
  struct Release {
    LoopJob& j;
    ~Release() { j.in_use = false; }
  } release{job};
  job.reset(plan, helpers + 1, body, context);
  job.reserve_first_chunk();
  job.execute = &ExecutorImpl::execute_loop_helper;
  if (w != nullptr) {
    for (std::size_t h = 0; h < helpers; ++h) w->cpu_queue.push(&job);
  } else {
    cpu_injection_.push(&job, helpers);
  }
  notify(true, false);

  if (probed < first_end) job.run_piece(0, probed, first_end);
  job.done_chunks.fetch_add(1, std::memory_order_release);
  job.participate(between_chunks);

  // Take back the helpers nobody picked up. A worker's own are on top of its deque: the
  // chunks it ran have finished, and with them anything they pushed.
  std::size_t reclaimed = 0;
  if (w != nullptr) {
    while (reclaimed < helpers) {
      Task* t = w->cpu_queue.pop();
      if (t == &job) {
        ++reclaimed;
      } else {
        if (t != nullptr) w->cpu_queue.push(t);
        break;
      }
    }
  } else {
    reclaimed = cpu_injection_.remove(&job, helpers);
  }
  job.helpers_taken = helpers - reclaimed;

  // Chunks still running elsewhere are short (a fraction of the range). A worker waiting here
  // runs what its own deque holds: a helper of this loop under work that a chunk queued, or
  // that work itself.
  for (unsigned spins = 0; !job.all_chunks_done(); ++spins) {
    if (w != nullptr) {
      if (Task* t = w->cpu_queue.pop()) {
        ++w->loop_wait_depth;
        t->execute(t, w);
        --w->loop_wait_depth;
        continue;
      }
    }
    if (spins < 64)
      TESSERA_CPU_RELAX();
    else
      std::this_thread::yield();
  }
  if (job.failed.load(std::memory_order_acquire)) {
    std::lock_guard lock(job.error_mutex);
    std::rethrow_exception(job.error);
  }
}

void ExecutorImpl::execute_loop_helper(Task* task, Worker* worker) {
  auto* job = static_cast<LoopJob*>(task);
  // Join only while more than half the chunks are left. If the caller got through more than
  // half in the time this helper took to arrive, it finishes the rest sooner than a helper's
  // chunk would travel back to it (a cache line round trip between cores can cost ~0.5 us).
  if (2 * job->done_chunks.load(std::memory_order_relaxed) < job->plan.count)
    job->participate([worker] { worker->executor->poll_between_tasks(*worker); });
  // Count this worker as looking for work before the caller can see the loop finished: a
  // caller launching its next loop then finds a spinner instead of waking a sleeper, which
  // would put a system call on its path.
  if (!worker->counted_as_spinning && worker->loop_wait_depth == 0) {
    worker->executor->notifier_of(*worker).begin_spinning();
    worker->counted_as_spinning = true;
  }
  // Last touch of the job.
  job->helpers_released.fetch_add(1, std::memory_order_release);
}

// ---------------------------------------------------------------------------------------------
// Tracing

void ExecutorImpl::start_trace() {
  for (auto& w : workers_) {
    std::lock_guard lock(w->trace_mutex);
    w->trace_events.clear();
  }
  trace_origin_ = std::chrono::steady_clock::now();
  if (!tracing_.exchange(true, std::memory_order_acq_rel)) TraceSources::instance().begin_recording(trace_origin_);
}

Trace ExecutorImpl::stop_trace() {
  const bool was_tracing = tracing_.exchange(false, std::memory_order_acq_rel);
  Trace trace;
  for (auto& w : workers_) {
    trace.add_track("worker " + std::to_string(w->id) + " (" + std::string(to_string(w->priority)) + " priority)");
    std::lock_guard lock(w->trace_mutex);
    for (auto& e : w->trace_events) trace.events.push_back(std::move(e));
    w->trace_events.clear();
  }
  if (was_tracing) TraceSources::instance().end_recording(trace);  // device streams' tracks
  return trace;
}

void ExecutorImpl::record_trace(Worker& w, const Node& node, std::chrono::steady_clock::time_point begin) {
  record_trace(w, node.name().empty() ? std::string("node") : node.name(), node.kind(), begin);
}

void ExecutorImpl::record_trace(Worker& w, std::string label, ExecKind kind, std::chrono::steady_clock::time_point begin) {
  const auto end = std::chrono::steady_clock::now();
  auto since = [this](std::chrono::steady_clock::time_point t) {
    auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(t - trace_origin_).count();
    return d > 0 ? static_cast<std::uint64_t>(d) : std::uint64_t{0};
  };
  std::lock_guard lock(w.trace_mutex);
  w.trace_events.push_back(TraceEvent{std::move(label), std::string(to_string(kind)), w.id, since(begin), since(end)});
}

}  // namespace tessera::detail
