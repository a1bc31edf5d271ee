#pragma once
// Where threads that are not workers of an executor (the caller of run() or parallel_for, a
// device callback) hand it work: a FIFO ring under a spin lock. Critical sections are a few
// instructions; a mutex here put the caller of a small parallel_for to sleep on a futex.

#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work_stealing_deque.hpp>

#include <atomic>
#include <thread>
#include <vector>

namespace tessera::detail {

class InjectionQueue {
public:
  InjectionQueue() : ring_(64) {}

  void push(Task* t, std::size_t copies = 1) {
    lock();
    if (count_ + copies > ring_.size()) grow(count_ + copies);
    for (std::size_t i = 0; i < copies; ++i) ring_[(head_ + count_ + i) % ring_.size()] = t;
    count_ += copies;
    size_.store(count_, std::memory_order_release);
    unlock();
  }

  Task* pop() {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;
    lock();
    Task* t = nullptr;
    if (count_ != 0) {
      t = ring_[head_];
      head_ = (head_ + 1) % ring_.size();
      size_.store(--count_, std::memory_order_release);
    }
    unlock();
    return t;
  }

  /// Takes back up to `copies` queued entries of `t`; returns how many it took.
  std::size_t remove(Task* t, std::size_t copies) {
    lock();
    std::size_t removed = 0, kept = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      Task* x = ring_[(head_ + i) % ring_.size()];
      if (x == t && removed < copies)
        ++removed;
      else
        ring_[(head_ + kept++) % ring_.size()] = x;
    }
    count_ = kept;
    size_.store(count_, std::memory_order_release);
    unlock();
    return removed;
  }

  std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

private:
  void grow(std::size_t needed) {
    std::size_t n = ring_.size();
    while (n < needed) n *= 2;
    std::vector<Task*> bigger(n);
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(bigger);
    head_ = 0;
  }

  void lock() noexcept {
    for (unsigned spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();  // the holder may have been preempted
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  alignas(cache_line_size) std::atomic<bool> locked_{false};
  std::atomic<std::size_t> size_{0};
  std::vector<Task*> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace tessera::detail
