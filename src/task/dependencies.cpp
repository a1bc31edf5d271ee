// Implicit dependencies (PREMA §3.1.2): per object, the last task that writes it and the
// readers submitted since. A reader follows the last writer; a writer follows the readers (or,
// with none, the last writer), and then starts a new list: later tasks need only follow it.
#include "runtime_impl.hpp"

#include <tessera/task/task_error.hpp>

#include <algorithm>

namespace tessera::detail {

ObjectState::ObjectState(TaskRuntimeImpl& rt, MemoryManager& memory, std::size_t n, std::size_t elem_bytes,
                         const std::type_info& elem_type, std::string label)
    : runtime(rt), buffer(memory, n, elem_bytes, std::move(label)), type(elem_type), element_bytes(elem_bytes), count(n) {}

ObjectState::~ObjectState() {
  if (last_writer != nullptr) last_writer->release();
  for (TaskState* r : readers) r->release();
  if (hold != nullptr) hold->release();
}

namespace {

// Completed readers need no edge any more; drop them once the list has doubled, so a long run
// of readers without a writer (a constant every task reads) keeps a short list.
void prune_readers(ObjectState& o) {
  auto done = std::remove_if(o.readers.begin(), o.readers.end(), [](TaskState* r) {
    if (!r->finished()) return false;
    r->release();
    return true;
  });
  o.readers.erase(done, o.readers.end());
  o.prune_readers_at = std::max<std::size_t>(32, 2 * o.readers.size());
}

}  // namespace

void TaskRuntimeImpl::add_access(ObjectState& o, TaskState* t, Access mode) {
  std::lock_guard lock(o.lock);
  o.newest_access.store(t, std::memory_order_relaxed);
  // A task that reads takes on a failure of the writer it reads from; edges that only order (a
  // writer after readers, a write after a write) do not pass failures on: nothing bad is read.
  if (!access_writes(mode)) {
    if (o.last_writer != nullptr) link(o.last_writer, t, true);
    t->retain();
    o.readers.push_back(t);
    if (o.readers.size() >= o.prune_readers_at) prune_readers(o);
    return;
  }
  if (o.last_writer != nullptr && (o.readers.empty() || access_reads(mode))) link(o.last_writer, t, access_reads(mode));
  for (TaskState* r : o.readers) {
    link(r, t, false);
    r->release();
  }
  o.readers.clear();
  o.prune_readers_at = 32;
  t->retain();
  if (o.last_writer != nullptr) o.last_writer->release();
  o.last_writer = t;
}

void TaskRuntimeImpl::leave_dependency_lists(ObjectState& o, TaskState* t) {
  // Only when the lock is free and no task came since: otherwise the submitter drops the
  // reference itself once a writer replaces the lists, or prunes it, and a busy object (a
  // chain) costs a read here, not a lock taken away from the submitting thread.
  if (o.newest_access.load(std::memory_order_relaxed) != t || !o.lock.try_lock()) return;
  TaskState* dropped = nullptr;
  if (o.last_writer == t) {
    o.last_writer = nullptr;
    dropped = t;
  } else if (!o.readers.empty() && o.readers.back() == t) {
    // The last reader only: a constant read by a long run of tasks keeps a long list, which a
    // search per completion would make quadratic; prune_readers drops the others.
    o.readers.pop_back();
    dropped = t;
  }
  o.lock.unlock();
  if (dropped != nullptr) dropped->release();
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
