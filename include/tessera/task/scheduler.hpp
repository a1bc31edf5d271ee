#pragma once
// Scheduler: where and in which order runnable GPU-kind tasks run (PREMA §3.1.4). An abstract
// class with push and pop, and three policies. CPU-kind tasks do not pass through it: the host
// is the only device of their kind, so they go straight to the executor's work-stealing deques.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tessera {

namespace detail {
class TaskState;
}

/// What a scheduler sees of a runnable task. Devices are numbered as accelerators (0 is
/// devices.accelerator(0), memory space 1).
class ScheduledTask {
public:
  ScheduledTask() = default;
  explicit ScheduledTask(detail::TaskState* state) noexcept : state_(state) {}

  const std::string& name() const;
  /// The task's Task::estimate (0 when none was given).
  std::chrono::nanoseconds estimate() const;
  /// Bytes the task reads (its read and read_write arguments).
  std::size_t input_bytes() const;
  /// Of those, the bytes already valid on accelerator `device`: what it would not have to copy.
  std::size_t resident_input_bytes(std::size_t device) const;

  explicit operator bool() const noexcept { return state_ != nullptr; }
  detail::TaskState* state() const noexcept { return state_; }

private:
  detail::TaskState* state_ = nullptr;
};

/// Implement push and pop to schedule GPU-kind tasks your way. Both are called from any thread.
///
///   class Newest : public tessera::Scheduler {        // LIFO on whichever device asks
///     std::mutex m; std::vector<tessera::ScheduledTask> stack;
///   public:
///     std::size_t push(tessera::ScheduledTask t) override { std::lock_guard l(m); stack.push_back(t); return any_device; }
///     tessera::ScheduledTask pop(std::size_t) override {
///       std::lock_guard l(m);
///       if (stack.empty()) return {};
///       auto t = stack.back(); stack.pop_back(); return t;
///     }
///   };
class Scheduler {
public:
  /// push's answer when any device may take the task.
  static constexpr std::size_t any_device = SIZE_MAX;

  virtual ~Scheduler() = default;
  /// Called once by the runtime, before any push, with the number of accelerators.
  virtual void attach(std::size_t num_devices) { (void)num_devices; }
  /// Takes a runnable task; returns the device whose pop will return it, or any_device.
  virtual std::size_t push(ScheduledTask task) = 0;
  /// The next task for `device` to run, or an empty ScheduledTask.
  virtual ScheduledTask pop(std::size_t device) = 0;
  /// A task popped for `device` has finished (its arguments are no longer queryable).
  virtual void finished(const ScheduledTask& task, std::size_t device) {
    (void)task;
    (void)device;
  }
};

/// One queue in submission order; whichever device asks first takes the next task.
///
///   options.scheduler = tessera::fifo_scheduler();
std::shared_ptr<Scheduler> fifo_scheduler();
/// A queue per device: a task goes to the device that already holds most of its input bytes;
/// ties go to the device with the least expected wait (queued estimates, or queued tasks).
///
///   options.scheduler = tessera::locality_scheduler();
std::shared_ptr<Scheduler> locality_scheduler();
/// A queue per device: a task goes where its expected finish is earliest, counting the work
/// queued there (Task::estimate) and the time to copy the input bytes it lacks there at
/// `bytes_per_second`. With no estimates it spreads tasks while keeping them near their data.
///
///   options.scheduler = tessera::data_affine_scheduler(12e9);  // a PCIe 3 x16 link
std::shared_ptr<Scheduler> data_affine_scheduler(double bytes_per_second = 10e9);

}  // namespace tessera
