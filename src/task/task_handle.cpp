// TaskHandle queries and waits, Task's settings, and what schedulers may ask of a task.
#include "runtime_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/task/task.hpp>

#include <thread>

namespace tessera {

detail::TaskState& TaskHandle::checked() const {
  if (state_ == nullptr)
    throw Error("TaskHandle is empty (default-constructed or moved from); use the handle submit returned");
  return *state_;
}

bool TaskHandle::done() const { return checked().finished(); }

bool TaskHandle::failed() const { return checked().status.load(std::memory_order_acquire) == detail::TaskStatus::failed; }

void TaskHandle::wait() const {
  auto& s = checked();
  if (s.finished()) return;
  s.has_waiter.store(true, std::memory_order_seq_cst);
  for (auto st = s.status.load(std::memory_order_seq_cst); st < detail::TaskStatus::done;
       st = s.status.load(std::memory_order_seq_cst))
    s.status.wait(st, std::memory_order_seq_cst);
}

bool TaskHandle::wait_for(std::chrono::nanoseconds timeout) const {
  auto& s = checked();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // std::atomic has no timed wait: poll, backing off to 1 ms.
  for (auto pause = std::chrono::microseconds(1); !s.finished(); pause = std::min(pause * 2, std::chrono::microseconds(1000))) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
  }
  return true;
}

void TaskHandle::get() const {
  wait();
  if (failed()) std::rethrow_exception(state_->error);
}

Device& TaskHandle::device() const {
  auto& s = checked();
  if (!s.finished() || s.device == nullptr)
    throw Error("TaskHandle::device: task '" + s.name + "' has not run yet; wait() for it first");
  return *s.device;
}

const std::string& TaskHandle::name() const { return checked().name; }

Task& Task::add_dependency(const Task& before) {
  auto& s = checked();
  if (before.state() == nullptr)
    throw Error("Task '" + s.name + "': add_dependency on an empty Task; pass a task built with native_task or kernel_task");
  if (before.state() == state_)
    throw Error("Task '" + s.name + "': add_dependency on itself; a task cannot wait for itself");
  if (s.status.load(std::memory_order_acquire) != detail::TaskStatus::created)
    throw Error("Task '" + s.name + "': add_dependency after submit; add dependencies before submitting the task");
  before.state()->retain();
  s.explicit_deps.push_back(before.state());
  return *this;
}

Task& Task::shared_bytes(std::size_t bytes) {
  auto& s = checked();
  if (s.status.load(std::memory_order_acquire) != detail::TaskStatus::created)
    throw Error("Task '" + s.name + "': shared_bytes after submit; set it before submitting the task");
  s.shared_bytes = bytes;
  return *this;
}

Task& Task::estimate(std::chrono::nanoseconds expected) {
  auto& s = checked();
  if (s.status.load(std::memory_order_acquire) != detail::TaskStatus::created)
    throw Error("Task '" + s.name + "': estimate after submit; set it before submitting the task");
  s.estimate = expected;
  return *this;
}

void* TaskContext::cuda_stream() const noexcept { return stream_->native_handle(); }

const std::string& ScheduledTask::name() const { return state_->name; }
std::chrono::nanoseconds ScheduledTask::estimate() const { return state_->estimate; }

std::size_t ScheduledTask::input_bytes() const {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < state_->num_args; ++i)
    if (access_reads(state_->args[i].mode) && state_->args[i].object) bytes += state_->args[i].object->buffer.bytes();
  return bytes;
}

std::size_t ScheduledTask::resident_input_bytes(std::size_t device) const {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < state_->num_args; ++i) {
    const auto& a = state_->args[i];
    if (!access_reads(a.mode) || !a.object) continue;
    const Buffer& b = a.object->buffer;
    bytes += b.valid_rows(device + 1).row_count() * b.row_bytes();
  }
  return bytes;
}

}  // namespace tessera
