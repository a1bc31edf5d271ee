#include "executor_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>

namespace tessera {

Executor::Executor() : Executor(ExecutorOptions{}) {}
Executor::Executor(const ExecutorOptions& options) : impl_(std::make_unique<detail::ExecutorImpl>(options)) {}
Executor::~Executor() = default;

std::future<void> Executor::run(NodeGraph& graph) { return impl_->launch(graph, 1, nullptr); }

std::future<void> Executor::run_n(NodeGraph& graph, std::size_t n) { return impl_->launch(graph, n, nullptr); }

std::future<void> Executor::run_until(NodeGraph& graph, std::function<bool()> stop) {
  if (!stop) throw Error("Executor::run_until: graph '" + graph.name() + "' was given an empty stop predicate");
  return impl_->launch(graph, 0, std::move(stop));
}

void Executor::wait_for_all() { impl_->wait_for_all(); }

std::size_t Executor::num_workers() const noexcept { return impl_->num_workers(); }
std::size_t Executor::num_gpu_workers() const noexcept { return impl_->num_gpu_workers(); }
std::size_t Executor::num_cpu_workers() const noexcept { return impl_->num_workers() - impl_->num_gpu_workers(); }
StealStrategy Executor::steal_strategy() const noexcept { return impl_->steal_strategy(); }

int Executor::this_worker_id() const noexcept {
  detail::Worker* w = impl_->current_worker();
  return w == nullptr ? -1 : static_cast<int>(w->id);
}

void Executor::start_trace() { impl_->start_trace(); }
Trace Executor::stop_trace() { return impl_->stop_trace(); }

detail::LoopPlan Executor::plan_loop(std::size_t begin, std::size_t end, std::size_t grain) const noexcept {
  return impl_->plan_loop(begin, end, grain);
}

void Executor::run_loop(const detail::LoopPlan& plan, detail::ChunkBody body, void* context) {
  impl_->run_loop(plan, body, context);
}

Executor& default_executor() {
  static Executor executor;
  return executor;
}

}  // namespace tessera
