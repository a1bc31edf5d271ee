// The dataflow runtime: a value reaching an input may make its operation ready; a ready
// operation consumes one value per input its rule names and becomes a firing, a Job on the
// executor placed on a memory space; a finished firing's results leave each output in the order
// the firings started (a reorder buffer per operation), which keeps the order of values along
// every path. Device firings go through tessera::submit, so they only enqueue; the Buffers order
// the device work, and the flow counts it until the stream reaches it.

#include "engine.hpp"

#include <fmt/format.h>
#include <tessera/core/error.hpp>
#include <tessera/core/trace.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>
#include <tessera/flow/context.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <array>
#include <span>
#include <sstream>
#include <thread>

namespace tessera::flow::detail {
namespace {

// A firing that finishes on a worker may leave one host firing of the same flow here to run next
// on the same worker, instead of a round trip through the deques (a chain costs one Job, not one
// per link). While the job runs, it holds back the releases of the firings it emitted
// (`held_releases`), so the flow cannot go idle under it; a continuation made while it holds some
// needs no count of its own.
struct Continuation {
  Engine* engine = nullptr;
  Firing** slot = nullptr;
  std::size_t* held_releases = nullptr;
};
thread_local Continuation continuation;

// Firings are recycled, so that a trivial operation's firing allocates nothing: each thread keeps
// a few, and hands batches to (or takes them from) a shared pool, since firings are often made on
// one thread and finished on another (a fan-out).
class FiringPool {  // made once and never destroyed: threads' caches give back to it as they exit
 public:
  /// Moves the last `n` firings of `from` (all when n exceeds its size) into the pool.
  void give(std::vector<Firing*>& from, std::size_t n) {
    n = std::min(n, from.size());
    const auto first = from.end() - static_cast<std::ptrdiff_t>(n);
    {
      std::lock_guard lock(mutex_);
      if (free_.size() < 65536) {
        free_.insert(free_.end(), first, from.end());
        from.erase(first, from.end());
        return;
      }
    }
    for (auto it = first; it != from.end(); ++it) delete *it;
    from.erase(first, from.end());
  }
  void take(std::vector<Firing*>& into, std::size_t n) {
    std::lock_guard lock(mutex_);
    const std::size_t k = std::min(n, free_.size());
    into.insert(into.end(), free_.end() - static_cast<std::ptrdiff_t>(k), free_.end());
    free_.resize(free_.size() - k);
  }

 private:
  std::mutex mutex_;
  std::vector<Firing*> free_;
};
FiringPool& shared_pool() {
  static FiringPool* pool = new FiringPool();  // outlives every thread's cache
  return *pool;
}

constexpr std::size_t batch = 64;
struct FiringCache {
  std::vector<Firing*> free;
  ~FiringCache() { shared_pool().give(free, free.size()); }
};
thread_local FiringCache firing_cache;

Firing* new_firing() {
  auto& free = firing_cache.free;
  if (free.empty()) shared_pool().take(free, batch);
  if (free.empty()) return new Firing();
  Firing* f = free.back();
  free.pop_back();
  return f;
}

void recycle(Firing* f) {
  f->reset();
  auto& free = firing_cache.free;
  free.push_back(f);
  if (free.size() >= 2 * batch) shared_pool().give(free, batch);
}

// The firings one call makes ready, in a vector reused per thread (calls nest: a receiver may
// send), so that a firing's completion does not allocate.
thread_local std::vector<std::vector<Firing*>> spare_ready_lists;
class ReadyList {
 public:
  ReadyList() {
    if (!spare_ready_lists.empty()) {
      list_ = std::move(spare_ready_lists.back());
      spare_ready_lists.pop_back();
    }
  }
  ~ReadyList() {
    list_.clear();
    spare_ready_lists.push_back(std::move(list_));
  }
  ReadyList(const ReadyList&) = delete;
  ReadyList& operator=(const ReadyList&) = delete;
  std::vector<Firing*>& get() noexcept { return list_; }

 private:
  std::vector<Firing*> list_;
};

Executor& executor_of(const FlowOptions& o) { return o.executor != nullptr ? *o.executor : default_executor(); }

}  // namespace

Engine::Engine(Flow& f, DeviceSet& d, FlowOptions o)
    : flow(f), devices(d), options(std::move(o)), memory(d, options.memory), executor(executor_of(options)) {
  const std::size_t spaces = memory.num_spaces();
  per_space_ = std::make_unique<std::atomic<std::size_t>[]>(spaces);
  in_flight_per_space_ = std::make_unique<std::atomic<std::size_t>[]>(spaces);
  for (std::size_t i = 0; i < spaces; ++i) {
    per_space_[i] = 0;
    in_flight_per_space_[i] = 0;
  }
}

Engine::~Engine() {
  {
    std::unique_lock lock(wait_mutex_);
    idle_.wait(lock, [&] { return !busy(); });
  }
  // Queued values hold Arrays; drop them before the operations and the memory go.
  for (auto& op : ops_)
    for (InputBase* in : op->inputs_) in->queue_.clear();
}

InputBase& Engine::resolve(InputBase& in) {
  InputBase* p = &in;
  while (p->forward_ != nullptr) p = p->forward_;
  return *p;
}

void Engine::send(InputBase& port, Token token, std::uint64_t set) {
  Operation& owner = port.owner();
  if (owner.flow_ != &flow)
    throw Error(
        fmt::format("flow: cannot send into {}: the operation does not belong to this flow (add it with "
                    "Flow::add)",
                    port.full_name()));
  if (owner.state_ == nullptr)
    throw Error(fmt::format("flow: cannot send into {}: the operation was removed", port.full_name()));
  if (options.fusion && structure_changed_) fuse();
  InputBase& in = resolve(port);
  auto refuse_if_data = [&](const OutputBase* src) {
    if (src != nullptr && !src->owner().control_flow())
      throw Error(
          fmt::format("flow: cannot send into {}: it is fed by {}, a data operation, whose values would "
                      "interleave with the ones sent; send into an unconnected input or one fed by a "
                      "control-flow operation (Merger, Turnout, ...)",
                      port.full_name(), src->full_name()));
  };
  for (const OutputBase* src : in.sources_) refuse_if_data(src);
  refuse_if_data(in.fused_source_);
  token.set = set;
  ReadyList list;
  std::vector<Firing*>& ready = list.get();
  deliver(in, std::move(token), ready);
  schedule(ready);
}

void Engine::deliver(InputBase& in, Token token, std::vector<Firing*>& ready) {
  Operation& op = in.owner();
  OperationState& st = *op.state_;
  std::lock_guard lock(st.mutex);
  in.queue_.push_back(std::move(token));
  dispatch_locked(op, st, ready);
}

void Engine::dispatch_locked(Operation& op, OperationState& st, std::vector<Firing*>& ready) {
  const std::size_t n = op.inputs_.size();
  while (op.concurrent() || st.running == 0) {
    st.queued.resize(n);
    for (std::size_t i = 0; i < n; ++i) st.queued[i] = op.inputs_[i]->queue_.size();
    const std::uint64_t mask = op.ready(st.queued);
    if (mask == 0) return;
    // A rule that names an input without a value would consume nothing there: refuse it before
    // the firing takes a sequence number, so later firings still leave in order.
    for (std::size_t i = 0; i < 64; ++i)
      if ((mask >> i & 1u) != 0 && (i >= n || st.queued[i] == 0))
        throw Error(fmt::format("flow: {}'s readiness rule named input {}, which {}", op.name(), i,
                                i >= n ? fmt::format("it does not have ({} inputs)", n) : "holds no value"));
    Firing* f = new_firing();
    f->engine = this;
    f->op = &op;
    f->seq = st.next_seq++;
    f->inputs.assign_default(n);
    f->visits.assign_default(n);
    bool first = true;
    for (std::size_t i = 0; i < n; ++i) {
      if ((mask >> i & 1u) == 0) continue;
      auto& q = op.inputs_[i]->queue_;
      if (first) f->set = q.front().set, first = false;
      f->inputs[i] = std::move(q.front().value);
      f->visits[i] = q.front().visit;
      q.pop_front();
    }
    ++st.running;
    ready.push_back(f);  // counted in firings_ by schedule()
  }
}

void Engine::place(Firing& f) {
  const Operation& op = *f.op;
  const std::size_t accelerators = memory.num_spaces() - 1;
  std::size_t space = 0;
  if (op.pinned_space() >= 0) {
    space = static_cast<std::size_t>(op.pinned_space());
    if (space > accelerators)
      throw Error(fmt::format("flow: {} is pinned to space {}, but the flow has {} accelerator(s) (spaces 0..{})",
                              op.name(), space, accelerators, accelerators));
  } else if (op.runs() == Runs::host || accelerators == 0 || options.placement == Placement::host) {
    space = 0;
  } else if (options.placement == Placement::per_input_set) {
    space = 1 + f.set % accelerators;
  } else {
    // Data-affine: the accelerator holding most of the input bytes; ties to the least busy. The
    // tally lives on the stack for up to 16 accelerators: placement runs for every firing.
    std::array<std::size_t, 17> inline_bytes{};
    std::vector<std::size_t> more_bytes;
    if (accelerators + 1 > inline_bytes.size()) more_bytes.assign(accelerators + 1, 0);
    std::span<std::size_t> bytes = more_bytes.empty() ? std::span<std::size_t>(inline_bytes.data(), accelerators + 1)
                                                      : std::span<std::size_t>(more_bytes);
    auto weigh = [](const Buffer& b, void* c) {
      auto& by = *static_cast<std::span<std::size_t>*>(c);
      for (std::size_t s = 1; s < by.size(); ++s) {
        if (!b.has_replica(s)) continue;
        std::size_t rows = 0;
        for (const RowRange& r : b.valid_rows(s)) rows += r.end - r.begin;
        by[s] += rows * b.row_bytes();
      }
    };
    for (std::size_t i = 0; i < f.inputs.size(); ++i)
      if (f.visits[i] != nullptr) f.visits[i](f.inputs[i], weigh, &bytes);
    std::size_t best = 1;
    for (std::size_t s = 2; s <= accelerators; ++s)
      if (bytes[s] > bytes[best] ||
          (bytes[s] == bytes[best] && in_flight_per_space_[s].load(std::memory_order_relaxed) <
                                          in_flight_per_space_[best].load(std::memory_order_relaxed)))
        best = s;
    space = best;
  }
  f.space = space;
  if (space != 0) {
    Device& d = memory.device(space);
    const std::size_t streams = d.num_compute_streams();
    f.stream = &d.compute_stream(streams <= 1 ? 0 : f.set % streams);
  }
  if (options.trace_placement)
    trace_mark("flow placement", fmt::format("{} #{} on {}", op.name(), f.seq,
                                             space == 0 ? std::string("host") : memory.device(space).name()));
}

void Engine::schedule(std::vector<Firing*>& ready) {
  if (ready.empty()) return;
  Firing* next = nullptr;
  const bool can_continue =
      continuation.engine == this && continuation.slot != nullptr && *continuation.slot == nullptr;
  for (Firing* f : ready) {
    try {
      place(*f);
    } catch (...) {
      fail(*f->op, "placement", std::current_exception());
      f->failed = true;
      f->space = 0;
      f->stream = nullptr;
    }
    if (f->space != 0) {
      per_space_[f->space].fetch_add(1, std::memory_order_relaxed);
      in_flight_per_space_[f->space].fetch_add(1, std::memory_order_relaxed);
    } else if (can_continue && next == nullptr) {
      next = f;
    }
  }
  // One update of the shared count per batch (a fan-out makes many firings at once), made before
  // any of them can run; a continuation is covered by the releases its job holds back.
  if (next != nullptr) next->counted = *continuation.held_releases == 0;
  const std::size_t counted = ready.size() - (next != nullptr && !next->counted ? 1 : 0);
  if (counted > 0) firings_.fetch_add(counted, std::memory_order_relaxed);
  for (Firing* f : ready) {
    if (f == next) continue;
    executor.schedule(f->stream == nullptr ? f->cpu_job : f->gpu_job);
  }
  if (next != nullptr) *continuation.slot = next;  // runs next on this worker
  ready.clear();
}

void FiringJob::run_job(Job& self) {
  Firing* f = static_cast<FiringJob&>(self).firing;
  Engine& engine = *f->engine;
  Firing* next = nullptr;
  std::size_t held = 0;
  const Continuation saved = continuation;  // jobs nest: a parallel loop's worker runs others
  // Only a CPU job continues with the host firing it made ready. A device firing's job runs on a
  // GPU-priority worker, which must stay free to submit the next device work: a host firing
  // reading this one's results would hold it until the device is done.
  continuation = self.job_kind() == ExecKind::cpu ? Continuation{&engine, &next, &held} : Continuation{};
  while (f != nullptr) {
    held += engine.run(*f);  // completes f (and may recycle it)
    f = next;
    next = nullptr;
  }
  continuation = saved;
  if (held > 0) engine.release_firings(held);
}

std::size_t Engine::run(Firing& f) {
  Operation& op = *f.op;
  if (!f.failed) {
    Context ctx(f, flow, executor, f.space, f.stream);
    try {
      if (f.stream == nullptr) {
        f.holds.emplace();
        op.fire(ctx);
        f.holds.reset();  // releases the host holds
      } else {
        device_pending_.fetch_add(1, std::memory_order_relaxed);
        bool submitted = false;
        try {
          submit(
              *f.stream, {},
              [&](Stream& s) {
                tessera::detail::StreamAccesses accesses(f.space, s);
                f.device_accesses = &accesses;
                op.fire(ctx);
                f.device_accesses = nullptr;
                accesses.finish();
              },
              [this] { release(device_pending_); });
          submitted = true;
        } catch (...) {
          f.device_accesses = nullptr;
          if (!submitted) device_pending_.fetch_sub(1, std::memory_order_acq_rel);
          throw;
        }
      }
    } catch (...) {
      f.holds.reset();
      f.failed = true;
      f.produced.clear();
      fail(op, "a firing", std::current_exception());
    }
  }
  f.buffers.clear();
  return complete(f);
}

std::size_t Engine::complete(Firing& f) {
  Operation& op = *f.op;
  OperationState& st = *op.state_;
  ReadyList list;
  std::vector<Firing*>& ready = list.get();
  Firing* next = &f;
  {
    std::lock_guard lock(st.mutex);
    if (f.space != 0) in_flight_per_space_[f.space].fetch_sub(1, std::memory_order_relaxed);
    --st.running;
    if (!op.concurrent()) dispatch_locked(op, st, ready);
    if (st.emitting || f.seq != st.next_emit) {
      // An earlier firing has yet to leave, or another thread is emitting: it will emit this one.
      const std::size_t slot = static_cast<std::size_t>(f.seq - st.next_emit);
      if (st.finished.size() <= slot) st.finished.resize(slot + 1, nullptr);
      st.finished[slot] = &f;
      next = nullptr;
    } else {
      st.emitting = true;
      ++st.next_emit;
      if (!st.finished.empty()) st.finished.pop_front();  // this firing's own (empty) slot
    }
  }
  // This thread emits, in firing order, every finished firing whose turn has come. The flow's
  // count drops only at the end: until then it cannot become idle (and be destroyed) under us.
  std::size_t emitted = 0;  // of the firings counted in firings_
  while (next != nullptr) {
    emit(*next, ready);
    if (next->counted) ++emitted;
    recycle(next);
    std::lock_guard lock(st.mutex);
    if (st.finished.empty() || st.finished.front() == nullptr) {
      st.emitting = false;
      next = nullptr;
    } else {
      next = st.finished.front();
      st.finished.pop_front();
      ++st.next_emit;
    }
  }
  schedule(ready);
  return emitted;  // the job releases them when it ends
}

void Engine::emit(Firing& f, std::vector<Firing*>& ready) {
  for (std::size_t p = 0; p < f.produced.size(); ++p) {
    auto& [index, token] = f.produced[p];
    OutputBase& out = *f.op->outputs_[index];
    token.set = f.set;
    for (const Receiver& r : out.receivers_) {
      try {
        r(token.value, token.set);
      } catch (...) {
        fail(*f.op, fmt::format("the on_receive callback of {}", out.full_name()), std::current_exception());
      }
    }
    const std::size_t targets = out.targets_.size();
    for (std::size_t t = 0; t < targets; ++t) {
      try {
        if (t + 1 == targets)
          deliver(*out.targets_[t], std::move(token), ready);
        else
          deliver(*out.targets_[t], token, ready);
      } catch (...) {
        fail(out.targets_[t]->owner(), "readiness", std::current_exception());
      }
    }
  }
  f.produced.clear();
}

// The flow may be destroyed as soon as a waiter sees the counts reach zero, so the decrement
// that reaches zero happens under the waiters' mutex: a waiter cannot see it before this thread
// has notified and let go.
void Engine::release(std::atomic<std::size_t>& counter, std::size_t n) {
  std::size_t c = counter.load(std::memory_order_acquire);
  while (c > n)
    if (counter.compare_exchange_weak(c, c - n, std::memory_order_acq_rel)) return;
  std::lock_guard lock(wait_mutex_);
  counter.fetch_sub(n, std::memory_order_acq_rel);
  idle_.notify_all();
}

std::size_t Engine::queued_values() const {
  std::size_t n = 0;
  for (const auto& op : ops_) {
    std::lock_guard lock(op->state_->mutex);
    for (const InputBase* in : op->inputs_) n += in->queue_.size();
  }
  return n;
}

void Engine::fail(const Operation& op, const std::string& what, std::exception_ptr e) {
  std::lock_guard lock(error_mutex_);
  if (errors_++ == 0) {
    first_error_ = fmt::format("flow: {} of operation '{}' failed: {}", what, op.name(), describe_exception(e));
    first_exception_ = e;
  }
}

void Engine::wait() {
  {
    std::unique_lock lock(wait_mutex_);
    idle_.wait(lock, [&] { return !busy(); });
  }
  std::string error;
  {
    std::lock_guard lock(error_mutex_);
    if (errors_ > 0) {
      error = first_error_;
      if (errors_ > 1) error += fmt::format(" (and {} more failure(s))", errors_ - 1);
      errors_ = 0;
      first_exception_ = nullptr;
    }
  }
  if (!error.empty()) throw Error(error);
  std::lock_guard lock(graph_mutex_);
  if (const std::size_t queued = queued_values(); queued != 0) {
    std::ostringstream where;
    for (const auto& op : ops_) {
      if (op->state_ == nullptr || op->state_->replaced) continue;
      for (const InputBase* in : op->inputs_)
        if (!in->queue_.empty())
          where << (where.tellp() > 0 ? ", " : "") << in->full_name() << " (" << in->queue_.size() << ")";
    }
    throw Error(
        fmt::format("flow: {} value(s) wait at inputs whose operations can never fire: {}; each operation fires "
                    "when its readiness rule holds (by default a value on every input), so send the missing "
                    "inputs or change the graph (Flow::discard_pending drops them)",
                    queued, where.str()));
  }
}

std::size_t Engine::discard_pending() {
  if (busy()) throw Error("flow: cannot discard pending values while firings are in flight; call Flow::wait() first");
  std::lock_guard lock(graph_mutex_);
  std::size_t n = 0;
  for (const auto& op : ops_) {
    std::lock_guard op_lock(op->state_->mutex);
    for (InputBase* in : op->inputs_) {
      n += in->queue_.size();
      in->queue_.clear();
    }
  }
  return n;
}

FlowStats Engine::stats() const {
  FlowStats s;
  s.kernels = kernels_.load();
  std::lock_guard lock(graph_mutex_);
  // Every firing took a sequence number of its operation; those not on an accelerator ran on
  // the host.
  for (const auto& op : ops_) {
    std::lock_guard op_lock(op->state_->mutex);
    s.firings += op->state_->next_seq;
  }
  s.firings += retired_firings_;
  std::size_t on_accelerators = 0;
  s.firings_per_space.assign(memory.num_spaces(), 0);
  for (std::size_t i = 1; i < memory.num_spaces(); ++i)
    on_accelerators += s.firings_per_space[i] = per_space_[i].load();
  s.firings_per_space[0] = s.firings - on_accelerators;
  s.fused = fused_;
  return s;
}

}  // namespace tessera::flow::detail
