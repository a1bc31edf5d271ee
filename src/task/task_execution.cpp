// Running kernels: CPU tasks on the worker that picked them up, GPU-kind tasks issued on a
// device's streams by that device's pump (an executor job) or its dedicated submission thread,
// through the device submission path (device/submit.hpp) and the kernel engine's launch.
#include "runtime_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>
#include <tessera/memory/detail/stream_accesses.hpp>

namespace tessera::detail {

namespace {

constexpr std::uint64_t bit(std::size_t i) { return std::uint64_t{1} << i; }

}  // namespace

void TaskRuntimeImpl::run_kernel_on_host(TaskState* t) {
  std::exception_ptr error;
  std::uint64_t via_buffer = 0;  // arguments prepared through the Buffer, to finish below
  try {
    for (std::size_t i = 0; i < t->num_args; ++i) {
      ObjectState& o = *t->args[i].object;
      // While the host copy is the only valid one, the Buffer's bookkeeping would change
      // nothing: the task's dependencies already keep conflicting work apart.
      if (void* sole = o.buffer.host_if_sole()) {
        t->ptrs[i] = sole;
      } else {
        t->ptrs[i] = o.buffer.prepare(0, *host_stream, t->args[i].mode);
        via_buffer |= bit(i);
      }
    }
    t->device = &devices.host();
    const TaskContext ctx(devices.host(), *host_stream, executor, t->name, t->grid, t->shared_bytes);
    t->run_host(ctx, t->ptrs);
  } catch (...) {
    error = task_failure(*t, std::current_exception());
  }
  for (std::size_t i = 0; i < t->num_args; ++i) {
    if ((via_buffer & bit(i)) == 0) continue;
    ObjectState& o = *t->args[i].object;
    try {
      o.buffer.finish(0, *host_stream, t->args[i].mode);
    } catch (...) {
      if (!error) error = task_failure(*t, std::current_exception());
    }
  }
  complete(t, error);
}

void TaskRuntimeImpl::issue(TaskState* t, DeviceLane& lane) {
  Device& d = *lane.device;
  const std::size_t space = lane.index + 1;
  Stream& s = d.compute_stream(lane.next_stream.fetch_add(1, std::memory_order_relaxed) % lane.streams);
  t->space = space;
  t->device = &d;
  if (!options.separate_copy_streams) {
    // One queue for copies and kernels: this task's copies in wait for the kernels before it.
    Event last;
    {
      std::lock_guard lock(lane.last_mutex);
      last = lane.last_kernel;
    }
    d.copy_stream(CopyDirection::host_to_device).wait(last);
    d.copy_stream(CopyDirection::device_to_device).wait(last);
  }
  std::exception_ptr error;
  try {
    Event done = tessera::submit(s, {}, [&](Stream&) {
      StreamAccesses prepared(space, s);
      for (std::size_t i = 0; i < t->num_args; ++i) {
        t->ptrs[i] = prepared.prepare(t->args[i].object->buffer, t->args[i].mode);
      }
      const TaskContext ctx(d, s, nullptr, t->name, t->grid, t->shared_bytes);
      launch_on_stream(s, [t] { return t->name; },
                       [t, ctx] {  // a sim device: the kernel runs on its stream's thread, in stream order
                         try {
                           t->run_host(ctx, t->ptrs);
                         } catch (...) {
                           t->error = task_failure(*t, std::current_exception());
                         }
                       },
                       [&](void*) { t->launch_cuda(ctx, t->ptrs); });
      prepared.finish();
    }, [this, t] { complete(t, nullptr); });
    if (!options.separate_copy_streams) {
      std::lock_guard lock(lane.last_mutex);
      lane.last_kernel = std::move(done);
    }
  } catch (...) {
    error = task_failure(*t, std::current_exception());
  }
  if (error) complete(t, error);
}

void TaskRuntimeImpl::wake(std::size_t device) {
  if (device == Scheduler::any_device) {
    for (auto& lane : lanes_) wake_lane(*lane);
    return;
  }
  if (device >= lanes_.size())
    throw Error("Scheduler::push returned device " + std::to_string(device) + ", but there are " +
                std::to_string(lanes_.size()) + " accelerators; return an index below that, or Scheduler::any_device");
  wake_lane(*lanes_[device]);
}

void TaskRuntimeImpl::wake_lane(DeviceLane& lane) {
  if (options.dedicated_submit_threads) {
    {
      std::lock_guard lock(lane.wake_mutex);
      lane.has_work = true;
    }
    lane.wake.notify_one();
    return;
  }
  if (lane.pump_scheduled.exchange(true, std::memory_order_seq_cst)) return;  // a pump will look
  pumps_active_.fetch_add(1, std::memory_order_relaxed);
  executor->schedule(lane);
}

void TaskRuntimeImpl::pump_lane(DeviceLane& lane) { lane.runtime->pump(lane); }

void TaskRuntimeImpl::pump(DeviceLane& lane) {
  for (;;) {
    while (ScheduledTask st = scheduler->pop(lane.index)) issue(st.state(), lane);
    // Clear the flag, then look once more: a push that the last pop missed sees the flag clear
    // and schedules the pump again, or this look finds its task.
    lane.pump_scheduled.store(false, std::memory_order_seq_cst);
    ScheduledTask st = scheduler->pop(lane.index);
    if (!st) break;
    const bool another_pump = lane.pump_scheduled.exchange(true, std::memory_order_seq_cst);
    issue(st.state(), lane);
    if (another_pump) break;
  }
  pumps_active_.fetch_sub(1, std::memory_order_release);  // last touch of the runtime
}

void TaskRuntimeImpl::submit_thread(DeviceLane& lane) {
  for (;;) {
    {
      std::unique_lock lock(lane.wake_mutex);
      lane.wake.wait(lock, [&] { return lane.has_work || lane.stopping; });
      if (!lane.has_work) return;  // stopping, with nothing left
      lane.has_work = false;
    }
    while (ScheduledTask st = scheduler->pop(lane.index)) issue(st.state(), lane);
  }
}

}  // namespace tessera::detail
