#pragma once
// Where threads that are not workers of an executor (the caller of run(), a device callback)
// hand it work. Rarely used on the hot path, so a mutex is enough; the size counter lets
// workers skip the lock when it is empty.

#include <tessera/sched/detail/task.hpp>

#include <atomic>
#include <deque>
#include <mutex>

namespace tessera::detail {

class InjectionQueue {
public:
  void push(Task* t, std::size_t copies = 1) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < copies; ++i) tasks_.push_back(t);
    size_.fetch_add(copies, std::memory_order_release);
  }

  Task* pop() {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(mutex_);
    if (tasks_.empty()) return nullptr;
    Task* t = tasks_.front();
    tasks_.pop_front();
    size_.fetch_sub(1, std::memory_order_release);
    return t;
  }

private:
  std::mutex mutex_;
  std::deque<Task*> tasks_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace tessera::detail
