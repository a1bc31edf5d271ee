// Implicit dependencies (PREMA §3.1.2): each object's accesses go to the data layer's
// AccessLog, which says which earlier tasks a new one follows; here they become edges.
#include "runtime_impl.hpp"

#include <tessera/task/task_error.hpp>


namespace tessera::detail {

ObjectState::ObjectState(TaskRuntimeImpl& rt, MemoryManager& memory, std::size_t n, std::size_t elem_bytes,
                         const std::type_info& elem_type, std::string label)
    : runtime(rt), buffer(memory, n, elem_bytes, std::move(label)), type(elem_type), element_bytes(elem_bytes), count(n) {}

ObjectState::~ObjectState() {
  if (hold != nullptr) hold->release();
}

void TaskRuntimeImpl::add_access(ObjectState& o, TaskState* t, Access mode) {
  std::lock_guard lock(o.lock);
  o.newest_access.store(t, std::memory_order_relaxed);
  // A task that reads takes on a failure of the writer it reads from; edges that only order (a
  // writer after readers, a write after a write) do not pass failures on: nothing bad is read.
  o.accesses.declare(TaskRef(t), mode, {0, o.count}, [this, t](const TaskRef& earlier, Hazard h) {
    link(earlier.get(), t, h == Hazard::read_after_write);
  });
}

void TaskRuntimeImpl::leave_dependency_lists(ObjectState& o, TaskState* t) {
  // Only when the lock is free and no task came since: otherwise the submitter drops the
  // reference itself once a writer replaces the lists, or prunes it, and a busy object (a
  // chain) costs a read here, not a lock taken away from the submitting thread.
  if (o.newest_access.load(std::memory_order_relaxed) != t || !o.lock.try_lock()) return;
  // Held past the unlock: the log's reference is never the last one dropped under the lock.
  const TaskRef self(t);
  o.accesses.forget(self);
  o.lock.unlock();
}

void TaskRuntimeImpl::link(TaskState* pred, TaskState* succ, bool inherit) {
  if (pred == succ) return;
  std::exception_ptr failure;
  pred->lock.lock();
  if (pred->finished()) {
    if (inherit && pred->status.load(std::memory_order_acquire) == TaskStatus::failed) failure = pred->error;
  } else {
    // Counted before the edge is visible, so pred's completion cannot take succ's count to zero
    // while submit still holds its own.
    succ->pending.fetch_add(1, std::memory_order_relaxed);
    const Successor edge{succ, inherit};
    if (pred->num_successors < 2)
      pred->successors_inline[pred->num_successors] = edge;
    else
      pred->successors_more.push_back(edge);
    ++pred->num_successors;
  }
  pred->lock.unlock();
  if (failure) {
    std::lock_guard lock(succ->lock);
    if (!succ->inherited_error) succ->inherited_error = failure;
  }
}

}  // namespace tessera::detail
