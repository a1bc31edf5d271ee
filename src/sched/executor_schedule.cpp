// Executor::schedule: one caller-owned Job straight onto the workers' queues, for front ends
// that create work one piece at a time (the task layer) and cannot afford a graph per piece.
#include "executor_impl.hpp"

namespace tessera {

void Executor::schedule(Job& job) { impl_->schedule(&job.scheduled()); }

namespace detail {

void ExecutorImpl::schedule(Task* task) {
  // Read the kind first: once queued, the task may run and its owner free it.
  const bool gpu = task->exec_kind == ExecKind::gpu;
  enqueue(task, current_worker());
  notify(!gpu, gpu);
}

}  // namespace detail
}  // namespace tessera
