#pragma once
// The task runtime behind tessera::TaskRuntime: dependency inference over objects, the path of
// a task from submit to completion, and the device pumps that feed the scheduler's choices to
// the devices' streams.

#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/task/runtime.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::detail {

/// Per accelerator: its stream rotation, what feeds it (a pump task on the executor or a
/// dedicated thread), and for separate_copy_streams = false the last kernel issued.
struct DeviceLane : Job {
  // Pumps only issue (enqueue on streams): GPU-priority workers, which the executor keeps for
  // feeding devices.
  DeviceLane();

  TaskRuntimeImpl* runtime = nullptr;
  std::size_t index = 0;
  Device* device = nullptr;
  std::size_t streams = 1;
  std::atomic<std::size_t> next_stream{0};
  std::atomic<bool> pump_scheduled{false};

  std::mutex last_mutex;
  Event last_kernel;

  // Dedicated submission thread.
  std::mutex wake_mutex;
  std::condition_variable wake;
  bool has_work = false;
  bool stopping = false;
  std::thread thread;
};

class TaskRuntimeImpl {
public:
  TaskRuntimeImpl(DeviceSet& devices, TaskRuntimeOptions options);
  ~TaskRuntimeImpl();

  void submit(TaskState* t);
  void wait_all();

  /// Records that `t` reads or writes `object` (PREMA §3.1.2) and links it after the tasks it
  /// must follow.
  void add_access(ObjectState& object, TaskState* t, Access mode);
  /// Makes `succ` wait for `pred` (nothing when pred has finished). With `inherit`, a failure
  /// of pred becomes succ's (succ would use what pred failed to produce); without, the edge
  /// only orders (a writer after readers).
  void link(TaskState* pred, TaskState* succ, bool inherit = true);

  /// Drops a task that finished well from the object's dependency lists: later tasks need no
  /// edge to it, and the lists then keep only tasks in flight (and failed ones, whose failure
  /// later readers inherit) alive, so memory and cache footprint stay at the tasks in flight.
  void leave_dependency_lists(ObjectState& object, TaskState* t);

  void make_runnable(TaskState* t);
  /// Finishes `t`: releases its successors, wakes its waiters, drops the runtime's reference.
  void complete(TaskState* t, std::exception_ptr error);

  /// Executor entry for CPU-side work: kernels of CPU tasks, host holds, copies out, and tasks
  /// that only report an inherited failure.
  static void execute_task(TaskState& t);
  /// Executor entry for a device's pump.
  static void pump_lane(DeviceLane& lane);

  /// The error a task reports when it threw `e`.
  static std::exception_ptr task_failure(const TaskState& t, std::exception_ptr e);

  DeviceSet& devices;
  std::unique_ptr<MemoryManager> memory;
  std::shared_ptr<Scheduler> scheduler;
  Executor* executor;
  const TaskRuntimeOptions options;
  Stream* host_stream;

private:
  void run_on_host(TaskState* t);
  void run_kernel_on_host(TaskState* t);
  void grant_hold(TaskState* t);
  void copy_out(TaskState* t);
  void copy_in(TaskState* t);
  /// One copy between user memory and the replica in `space` of a copy task's object, on the
  /// device's copy stream for `direction`, inside the Buffer access of the task's mode; the task
  /// completes when the stream gets there.
  void copy_on_device(TaskState* t, std::size_t space, CopyDirection direction, void* user);
  /// The accelerator (memory space) copy_from sends an object to.
  std::size_t accelerator_space_for(const ObjectState& o) const;
  void issue(TaskState* t, DeviceLane& lane);
  void wake(std::size_t device);
  void wake_lane(DeviceLane& lane);
  void pump(DeviceLane& lane);
  void submit_thread(DeviceLane& lane);

  std::vector<std::unique_ptr<DeviceLane>> lanes_;
  std::atomic<std::int64_t> outstanding_{0};
  // Threads inside complete(): the destructor waits for them as well, since the last one still
  // touches `outstanding_` after it reaches zero.
  std::atomic<int> completing_{0};
  std::atomic<int> pumps_active_{0};     // pumps scheduled on the executor and not yet returned
  std::atomic<int> running_on_host_{0};  // workers inside execute_task
};

}  // namespace tessera::detail
