#pragma once
// TaskRuntime: dynamic heterogeneous tasks over coherent objects, on one node (PREMA §3.1).
// Include this header for the whole task front end.

#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/exec/group.hpp>
#include <tessera/task/hetero_object.hpp>
#include <tessera/task/scheduler.hpp>
#include <tessera/task/task.hpp>
#include <tessera/task/task_context.hpp>

#include <cstddef>
#include <memory>

namespace tessera {

class DeviceSet;
class Executor;

namespace detail {
class TaskRuntimeImpl;
class ObjectHandle;
}

struct TaskRuntimeOptions {
  /// Replica budgets per accelerator (see MemoryOptions).
  MemoryOptions memory;
  /// Places and orders GPU-kind tasks; null: fifo_scheduler().
  std::shared_ptr<Scheduler> scheduler;
  /// Whose workers run CPU tasks and issue GPU tasks; null: default_executor().
  Executor* executor = nullptr;
  /// One thread per accelerator that pops its tasks and issues them (PREMA §4.1.6), instead of
  /// the executor's GPU-priority workers.
  bool dedicated_submit_threads = false;
  /// Compute streams used per accelerator, round robin (0: all the device has). 1 serialises
  /// kernels on a device (PREMA §4.1.3's single queue).
  std::size_t compute_streams = 0;
  /// false: a task's input copies wait for the kernels already issued on the device, as if
  /// copies and kernels shared one queue (to measure what the separate copy streams buy).
  bool separate_copy_streams = true;
};

/// Runs tasks over HeteroObjects on the host and the accelerators of a DeviceSet.
///
///   auto devices = tessera::DeviceSet::select("sim:2");
///   tessera::TaskRuntime rt(devices);
///   tessera::HeteroObject<float> x(rt, n, "x");
///   rt.submit(tessera::native_task("init", tessera::TaskKind::cpu, init, tessera::write(x), n));
///   auto h = rt.submit(tessera::kernel_task("scale", tessera::TaskKind::gpu, grid, Scale{}, tessera::read_write(x)));
///   h.get();          // the scale ran on sim:0 or sim:1 after init, with x copied there
///
/// Dependencies between tasks follow from their arguments' access modes in submission order
/// (readers since the last writer run together; a writer waits for them), plus any added with
/// Task::add_dependency. Thread safe; submission from several threads orders by arrival.
class TaskRuntime {
public:
  /// Throws tessera::Error for bad memory budgets.
  explicit TaskRuntime(DeviceSet& devices, TaskRuntimeOptions options = {});
  /// Waits for every submitted task (and outstanding host holds must be released first).
  ~TaskRuntime();
  TaskRuntime(const TaskRuntime&) = delete;
  TaskRuntime& operator=(const TaskRuntime&) = delete;

  /// Queues the task and returns at once. Throws tessera::Error for a task already submitted,
  /// an empty one, or a GPU-kind task when the DeviceSet has no accelerator.
  ///
  ///   tessera::TaskHandle h = rt.submit(t);
  TaskHandle submit(const Task& task);
  /// Blocks until every task submitted so far has finished.
  void wait_all();

  DeviceSet& devices() noexcept;
  MemoryManager& memory() noexcept;
  Scheduler& scheduler() noexcept;
  Executor& executor() noexcept;

private:
  friend class detail::ObjectHandle;  // objects join the runtime's dependency order
  detail::TaskRuntimeImpl& impl() noexcept { return *impl_; }

  std::unique_ptr<detail::TaskRuntimeImpl> impl_;
};

}  // namespace tessera
