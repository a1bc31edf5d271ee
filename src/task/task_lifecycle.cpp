// A task from runnable to finished: where a runnable task goes (the executor for CPU-side work,
// the scheduler for GPU-kind kernels), and completion, which releases successors and hands a
// failure on to them.
#include "runtime_impl.hpp"

#include <tessera/task/task_error.hpp>

namespace tessera::detail {

std::exception_ptr TaskRuntimeImpl::task_failure(const TaskState& t, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const TaskError& already) {
    // Reported once: a failure raised for this task on its way to completion. Another task's or
    // a graph node's error thrown inside this task's body is this task's failure, like any other.
    if (already.node_name() == t.name) return e;
  } catch (...) {
  }
  return std::make_exception_ptr(TaskError(t.name, e, "task '" + t.name + "' failed: " + describe_exception(e)));
}

void TaskRuntimeImpl::make_runnable(TaskState* t) {
  // A task whose predecessor failed only reports it; that goes through the executor too, so a
  // long chain of failures unwinds iteratively, not as a recursion.
  if (t->kind == TaskKind::cpu || t->role != TaskRole::kernel || t->inherited_error) {
    executor->schedule(*t);
    return;
  }
  wake(scheduler->push(ScheduledTask(t)));
}

void TaskRuntimeImpl::complete(TaskState* t, std::exception_ptr error) {
  completing_.fetch_add(1, std::memory_order_acq_rel);
  if (!error && t->error) error = t->error;  // the kernel threw on a device stream
  if (error) t->error = error;
  if (t->kind == TaskKind::gpu && t->device != nullptr) scheduler->finished(ScheduledTask(t), t->space - 1);

  t->lock.lock();
  t->status.store(error ? TaskStatus::failed : TaskStatus::done, std::memory_order_seq_cst);
  const std::size_t n = t->num_successors;
  const Successor inline_succ[2] = {t->successors_inline[0], t->successors_inline[1]};
  std::vector<Successor> more = std::move(t->successors_more);
  t->num_successors = 0;
  t->lock.unlock();

  // The arguments go now: a finished task kept by an object's dependency lists must not keep
  // that object (or any other) alive.
  for (std::size_t i = 0; i < t->num_args; ++i) {
    if (!error) leave_dependency_lists(*t->args[i].object, t);
    t->args[i].object.reset();
  }
  for (TaskState* d : t->explicit_deps) d->release();
  t->explicit_deps.clear();

  for (std::size_t i = 0; i < n; ++i) {
    const Successor& edge = i < 2 ? inline_succ[i] : more[i - 2];
    TaskState* s = edge.task;
    if (error && edge.inherit) {
      std::lock_guard lock(s->lock);
      if (!s->inherited_error) s->inherited_error = error;
    }
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) make_runnable(s);
  }
  // seq_cst store above and load here, against the waiter's flag store and status load: either
  // it sees the task finished, or this sees it waiting.
  if (t->has_waiter.load(std::memory_order_seq_cst)) t->status.notify_all();
  t->release();
  if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) outstanding_.notify_all();
  completing_.fetch_sub(1, std::memory_order_release);  // last touch of the runtime
}

void run_task(TaskState& t) { TaskRuntimeImpl::execute_task(t); }

void TaskRuntimeImpl::execute_task(TaskState& task) {
  TaskState* t = &task;
  TaskRuntimeImpl* rt = t->runtime;
  // The task may complete before run_on_host returns (a copy's stream callback), and the
  // program then destroy the runtime and its devices: the destructor waits for this count.
  rt->running_on_host_.fetch_add(1, std::memory_order_relaxed);
  rt->run_on_host(t);
  rt->running_on_host_.fetch_sub(1, std::memory_order_release);  // last touch of the runtime
}

void TaskRuntimeImpl::run_on_host(TaskState* t) {
  if (t->inherited_error) {
    std::exception_ptr root = t->inherited_error;
    std::string root_name = "?", root_what;
    std::exception_ptr original = root;
    try {
      std::rethrow_exception(root);
    } catch (const TaskError& e) {
      root_name = e.node_name();
      original = e.original();
      root_what = describe_exception(original);
    } catch (...) {
      root_what = describe_exception(root);
    }
    complete(t, std::make_exception_ptr(TaskError(root_name, original,
                                                  "task '" + t->name + "' did not run: task '" + root_name +
                                                      "', which it depends on, failed: " + root_what)));
    return;
  }
  switch (t->role) {
    case TaskRole::kernel:
      run_kernel_on_host(t);
      break;
    case TaskRole::hold:
      grant_hold(t);
      break;
    case TaskRole::copy_out:
      copy_out(t);
      break;
    case TaskRole::copy_in:
      copy_in(t);
      break;
  }
}

}  // namespace tessera::detail
