#pragma once
// Internal: what a Task handle and a HeteroObject point to. Public headers need the layout
// (the kernel templates derive from TaskState); only the runtime (src/task) touches the fields.

#include <tessera/memory/access.hpp>
#include <tessera/memory/access_log.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/sched/job.hpp>
#include <tessera/task/detail/spin_lock.hpp>
#include <tessera/task/detail/task_pool.hpp>
#include <tessera/exec/grid.hpp>
#include <tessera/task/task_kind.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tessera {
class Device;
class TaskContext;
}

namespace tessera::detail {

class TaskRuntimeImpl;
class TaskState;

/// Runs a task the executor picked up (task_lifecycle.cpp).
void run_task(TaskState& t);

/// A counted reference to a task: what an object's access log keeps of the tasks that later
/// tasks must follow.
class TaskRef {
 public:
  TaskRef() = default;
  explicit TaskRef(TaskState* t) noexcept;
  TaskRef(const TaskRef& other) noexcept;
  TaskRef(TaskRef&& other) noexcept : task_(std::exchange(other.task_, nullptr)) {}
  TaskRef& operator=(TaskRef other) noexcept {
    std::swap(task_, other.task_);
    return *this;
  }
  ~TaskRef();
  TaskState* get() const noexcept { return task_; }
  friend bool operator==(const TaskRef& a, const TaskRef& b) noexcept { return a.task_ == b.task_; }

 private:
  TaskState* task_ = nullptr;
};
/// A finished reader needs no edge any more (AccessLog prunes it).
bool access_done(const TaskRef& t) noexcept;

/// One HeteroObject: its Buffer (rows are elements) and the tasks its accesses must follow.
struct ObjectState {
  ObjectState(TaskRuntimeImpl& rt, MemoryManager& memory, std::size_t n, std::size_t elem_bytes,
              const std::type_info& elem_type, std::string label);
  ~ObjectState();
  ObjectState(const ObjectState&) = delete;
  ObjectState& operator=(const ObjectState&) = delete;

  TaskRuntimeImpl& runtime;
  Buffer buffer;
  const std::type_info& type;
  const std::size_t element_bytes;
  const std::size_t count;

  // Implicit dependencies (PREMA §3.1.2), under `lock`: the data layer's access log, holding a
  // reference to the tasks later ones must follow; a task that finishes well takes itself out
  // when it can (TaskRuntimeImpl::leave_dependency_lists).
  SpinLock lock;
  AccessLog<TaskRef> accesses;
  TaskState* hold = nullptr;  // the host's request, until release()
  // The task that accessed the object last (written under `lock`, never dereferenced through
  // this): a completing task that is not it has been replaced in the lists or soon will be,
  // and need not take the lock to find out.
  std::atomic<const TaskState*> newest_access{nullptr};

};

using ObjectRef = std::shared_ptr<ObjectState>;

struct ArgBinding {
  ObjectRef object;
  Access mode = Access::read;
};

/// An edge to a task that waits; `inherit`: a failure here fails it too.
struct Successor {
  TaskState* task = nullptr;
  bool inherit = true;
};

enum class TaskStatus : std::uint8_t { created, submitted, done, failed };
enum class TaskRole : std::uint8_t { kernel, hold, copy_out, copy_in };

/// A task: its kernel (in a derived class), arguments, dependencies and state. Reference counted:
/// the user's Task/TaskHandle, the runtime while it is in flight, and objects' dependency lists.
class TaskState : public Job {
public:
  TaskState(std::string label, TaskKind k, TaskRole r)
      : Job([](Job& self) { run_task(static_cast<TaskState&>(self)); }), name(std::move(label)), kind(k), role(r) {}
  virtual ~TaskState() = default;
  TaskState(const TaskState&) = delete;
  TaskState& operator=(const TaskState&) = delete;

  // Tasks are built on one thread and mostly freed on another (the worker that completed
  // them): TaskPool makes that a thread-local push instead of a cross-thread free.
  static void* operator new(std::size_t bytes) { return TaskPool::allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { TaskPool::deallocate(p, bytes); }
  // Over-aligned kernels (rare) keep the global allocator, which honours the alignment.
  static void* operator new(std::size_t bytes, std::align_val_t a) { return ::operator new(bytes, a); }
  static void operator delete(void* p, std::size_t bytes, std::align_val_t a) noexcept { ::operator delete(p, bytes, a); }

  /// Runs the kernel on the host (a worker, or a sim stream's thread); `ptrs` are the replicas
  /// of the object arguments, in argument order.
  virtual void run_host(const TaskContext& ctx, void* const* ptrs) = 0;
  /// Enqueues the kernel on a CUDA device's stream; throws tessera::Error where it has no CUDA
  /// body (the file that built the task was compiled without nvcc).
  virtual void launch_cuda(const TaskContext& ctx, void* const* ptrs) = 0;

  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  bool finished() const noexcept { return status.load(std::memory_order_acquire) >= TaskStatus::done; }

  std::atomic<int> refs{1};
  // Unfinished predecessors, plus one held by submit until every edge is in place.
  std::atomic<int> pending{1};
  std::atomic<TaskStatus> status{TaskStatus::created};
  // Set by a thread about to block in TaskHandle::wait: completion then wakes it. Most tasks have
  // no waiter, and a wake-up call costs a system call.
  std::atomic<bool> has_waiter{false};

  const std::string name;
  const TaskKind kind;
  const TaskRole role;
  Grid grid;
  std::size_t shared_bytes = 0;
  std::chrono::nanoseconds estimate{0};

  // Arguments: storage lives in the derived class (a fixed count per kernel signature).
  ArgBinding* args = nullptr;
  void** ptrs = nullptr;
  std::size_t num_args = 0;

  std::vector<TaskState*> explicit_deps;  // retained; linked at submit
  TaskRuntimeImpl* runtime = nullptr;

  // Under `lock`: who waits for this task, and a failure inherited from a predecessor.
  SpinLock lock;
  Successor successors_inline[2];
  std::vector<Successor> successors_more;
  std::size_t num_successors = 0;
  std::exception_ptr inherited_error;

  // Written by whoever runs the task before `status` turns done/failed (release), read after.
  std::exception_ptr error;
  std::size_t space = 0;  // where it ran: 0 host, i accelerator i - 1
  Device* device = nullptr;
};

inline TaskRef::TaskRef(TaskState* t) noexcept : task_(t) {
  if (task_ != nullptr) task_->retain();
}
inline TaskRef::TaskRef(const TaskRef& other) noexcept : TaskRef(other.task_) {}
inline TaskRef::~TaskRef() {
  if (task_ != nullptr) task_->release();
}
inline bool access_done(const TaskRef& t) noexcept { return t.get() != nullptr && t.get()->finished(); }

}  // namespace tessera::detail
