#pragma once
// A lock for critical sections of a few instructions (a task's successor list, an object's
// reader list): a mutex there would put a submitting thread to sleep on a futex for nothing.

#include <atomic>
#include <thread>

namespace tessera::detail {

class SpinLock {
public:
  void lock() noexcept {
    for (unsigned spins = 0; flag_.exchange(true, std::memory_order_acquire);)
      while (flag_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();  // the holder may have been preempted
  }
  /// Takes the lock only if it is free now; for work that may as well be left to its holder.
  bool try_lock() noexcept {
    return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> flag_{false};
};

}  // namespace tessera::detail
