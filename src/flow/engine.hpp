#pragma once
// The dataflow runtime behind flow::Flow: streams, readiness, firings as executor Jobs, ordered
// emission, placement, completion counting and fusion.

#include "inline_vector.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/flow/flow.hpp>
#include <tessera/memory/detail/host_holds.hpp>
#include <tessera/memory/detail/stream_accesses.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/job.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tessera::flow::detail {

struct Firing;

/// The Job that runs a firing on the executor: CPU kind on the host, GPU kind where the firing
/// submits to a device (a GPU-priority worker issues it).
struct FiringJob : tessera::Job {
  FiringJob(Firing* f, ExecKind kind) : Job(&FiringJob::run_job, kind), firing(f) {}
  static void run_job(Job& self);
  Firing* firing;
};

/// One firing: the values it consumed and the results it produced.
struct Firing {
  Firing() : cpu_job(this, ExecKind::cpu), gpu_job(this, ExecKind::gpu) {}
  /// Back to the state of a new firing, keeping the vectors' capacity for the next one.
  void reset() noexcept {
    inputs.clear();
    visits.clear();
    produced.clear();
    buffers.clear();
    holds.reset();
    device_accesses = nullptr;
    failed = false;
    counted = true;
    stream = nullptr;
    space = 0;
  }
  FiringJob cpu_job;
  FiringJob gpu_job;

  Engine* engine = nullptr;
  Operation* op = nullptr;
  std::uint64_t seq = 0;
  std::uint64_t set = 0;
  std::size_t space = 0;
  Stream* stream = nullptr;
  InlineVector<std::any, 4> inputs;
  InlineVector<VisitFn, 4> visits;
  InlineVector<std::pair<std::size_t, Token>, 2> produced;
  bool failed = false;
  bool counted = true;  // in Engine::firings_ (a continuation may run under its job's count)
  // Data accesses of this firing: stable handles, host holds, device accesses.
  std::list<Buffer> buffers;  // a list: the holds and accesses keep pointers to its elements
  std::optional<tessera::detail::HostHolds> holds;
  tessera::detail::StreamAccesses* device_accesses = nullptr;
};

struct OperationState {
  std::mutex mutex;
  std::uint64_t next_seq = 0;
  std::uint64_t next_emit = 0;
  std::size_t running = 0;
  bool emitting = false;
  bool replaced = false;  // fused into another operation
  // Finished firings waiting for their turn to emit: slot i holds firing next_emit + i.
  std::deque<Firing*> finished;
  std::vector<std::size_t> queued;  // scratch for ready()
};

struct FuseCandidate {
  OutputBase* out;
  InputBase* in;
  FuserFn fuser;
};

class Engine {
 public:
  Engine(Flow& flow, DeviceSet& devices, FlowOptions options);
  ~Engine();

  // Graph structure (flow.cpp / graph.cpp).
  void adopt(std::unique_ptr<Operation> op);
  void remove(Operation& op);
  void connect(OutputBase& out, InputBase& in);
  void add_receiver(OutputBase& out, Receiver r);
  void add_fuser(OutputBase& out, InputBase& in, FuserFn f);
  void fuse();
  std::vector<const Operation*> operations() const;

  // Dataflow.
  void send(InputBase& port, Token token, std::uint64_t set);
  std::uint64_t new_input_set() { return next_set_.fetch_add(1, std::memory_order_relaxed); }
  void wait();
  std::size_t discard_pending();
  bool busy() const noexcept { return firings_.load() != 0 || device_pending_.load() != 0; }
  FlowStats stats() const;

  // Used by firings and contexts.
  /// Runs and completes `f`; returns how many counted firings it emitted, whose releases the
  /// caller owes.
  std::size_t run(Firing& f);
  /// Ends `n` counted firings (a job that ran them held their releases back).
  void release_firings(std::size_t n) { release(firings_, n); }
  void count_kernels(std::size_t n) noexcept { kernels_.fetch_add(n, std::memory_order_relaxed); }
  void fail(const Operation& op, const std::string& what, std::exception_ptr e);

  Flow& flow;
  DeviceSet& devices;
  FlowOptions options;
  MemoryManager memory;
  Executor& executor;

 private:
  void deliver(InputBase& in, Token token, std::vector<Firing*>& ready);
  void dispatch_locked(Operation& op, OperationState& st, std::vector<Firing*>& ready);
  void place(Firing& f);
  void schedule(std::vector<Firing*>& ready);
  std::size_t complete(Firing& f);
  void emit(Firing& f, std::vector<Firing*>& ready);
  void release(std::atomic<std::size_t>& counter, std::size_t n = 1);
  std::size_t queued_values() const;
  void check_idle(const char* what) const;
  static InputBase& resolve(InputBase& in);

  std::vector<std::unique_ptr<Operation>> ops_;
  std::vector<FuseCandidate> candidates_;
  mutable std::mutex graph_mutex_;
  std::atomic<bool> structure_changed_{true};

  std::atomic<std::uint64_t> next_set_{1};
  std::atomic<std::size_t> firings_{0};
  std::atomic<std::size_t> device_pending_{0};
  std::mutex wait_mutex_;
  std::condition_variable idle_;

  std::mutex error_mutex_;
  std::string first_error_;
  std::exception_ptr first_exception_;
  std::size_t errors_ = 0;

  std::atomic<std::size_t> kernels_{0};
  std::size_t fused_ = 0;
  std::size_t retired_firings_ = 0;  // of removed operations
  std::unique_ptr<std::atomic<std::size_t>[]> per_space_;
  std::unique_ptr<std::atomic<std::size_t>[]> in_flight_per_space_;
  std::atomic<std::size_t> round_robin_{0};
};

}  // namespace tessera::flow::detail
