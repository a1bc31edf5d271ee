// TaskRuntime: construction (devices, memory, scheduler, device lanes), submission, waiting.
#include "runtime_impl.hpp"

#include <tessera/core/error.hpp>

namespace tessera {

TaskRuntime::TaskRuntime(DeviceSet& devices, TaskRuntimeOptions options)
    : impl_(std::make_unique<detail::TaskRuntimeImpl>(devices, std::move(options))) {}
TaskRuntime::~TaskRuntime() = default;

TaskHandle TaskRuntime::submit(const Task& task) {
  detail::TaskState* t = task.state();
  if (t == nullptr)
    throw Error("TaskRuntime::submit: the Task is empty (default-constructed or moved from); build one with "
                "tessera::native_task or tessera::kernel_task");
  impl_->submit(t);
  t->retain();
  return TaskHandle(t);
}

void TaskRuntime::wait_all() { impl_->wait_all(); }
DeviceSet& TaskRuntime::devices() noexcept { return impl_->devices; }
MemoryManager& TaskRuntime::memory() noexcept { return *impl_->memory; }
Scheduler& TaskRuntime::scheduler() noexcept { return *impl_->scheduler; }
Executor& TaskRuntime::executor() noexcept { return *impl_->executor; }

namespace detail {

DeviceLane::DeviceLane()
    : Job([](Job& self) { TaskRuntimeImpl::pump_lane(static_cast<DeviceLane&>(self)); }, ExecKind::gpu) {}

TaskRuntimeImpl::TaskRuntimeImpl(DeviceSet& d, TaskRuntimeOptions o)
    : devices(d),
      memory(std::make_unique<MemoryManager>(d, o.memory)),
      scheduler(o.scheduler ? o.scheduler : fifo_scheduler()),
      executor(o.executor != nullptr ? o.executor : &default_executor()),
      options(std::move(o)),
      host_stream(&d.host().compute_stream(0)) {
  scheduler->attach(d.num_accelerators());
  for (std::size_t i = 0; i < d.num_accelerators(); ++i) {
    auto lane = std::make_unique<DeviceLane>();
    lane->runtime = this;
    lane->index = i;
    lane->device = &d.accelerator(i);
    const std::size_t have = lane->device->num_compute_streams();
    lane->streams = options.compute_streams == 0 ? have : std::min(options.compute_streams, have);
    lanes_.push_back(std::move(lane));
  }
  if (options.dedicated_submit_threads)
    for (auto& lane : lanes_) lane->thread = std::thread([this, l = lane.get()] { submit_thread(*l); });
}

TaskRuntimeImpl::~TaskRuntimeImpl() {
  wait_all();
  while (completing_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  for (auto& lane : lanes_) {
    if (!lane->thread.joinable()) continue;
    {
      std::lock_guard lock(lane->wake_mutex);
      lane->stopping = true;
    }
    lane->wake.notify_all();
    lane->thread.join();
  }
  // A pump that found nothing may still be returning on a worker.
  while (pumps_active_.load(std::memory_order_acquire) != 0 || running_on_host_.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
  memory->synchronize();
}

void TaskRuntimeImpl::wait_all() {
  for (std::int64_t n = outstanding_.load(std::memory_order_acquire); n != 0; n = outstanding_.load(std::memory_order_acquire))
    outstanding_.wait(n, std::memory_order_acquire);
}

void TaskRuntimeImpl::submit(TaskState* t) {
  if (t->kind == TaskKind::gpu && lanes_.empty())
    throw Error("TaskRuntime::submit: task '" + t->name + "' is TaskKind::gpu, but the devices (" + devices.spec() +
                ") have no accelerator; select one (DeviceSet::select(\"sim:2\") or \"cuda\", or TESSERA_DEVICES), "
                "or make the task TaskKind::cpu");
  for (std::size_t i = 0; i < t->num_args; ++i)
    if (&t->args[i].object->runtime != this)
      throw Error("TaskRuntime::submit: task '" + t->name + "': argument object '" + t->args[i].object->buffer.name() +
                  "' belongs to another TaskRuntime; objects are used by the runtime that created them");
  TaskStatus expected = TaskStatus::created;
  if (!t->status.compare_exchange_strong(expected, TaskStatus::submitted, std::memory_order_acq_rel))
    throw Error("TaskRuntime::submit: task '" + t->name +
                "' was submitted already; a task runs once: build a new one for each run");
  t->runtime = this;
  t->retain();  // the runtime's, until complete()
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  for (TaskState* before : t->explicit_deps) link(before, t);
  for (std::size_t i = 0; i < t->num_args; ++i) add_access(*t->args[i].object, t, t->args[i].mode);
  if (t->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // A host request with nothing to wait for is granted here, on the requesting thread. Through
  // the executor it would wait for a free worker: with every worker running a long task (one
  // DGEMM each), the host could not write the next inputs until one of them finished.
  if (t->role == TaskRole::hold)
    run_on_host(t);
  else
    make_runnable(t);
}

}  // namespace detail
}  // namespace tessera
