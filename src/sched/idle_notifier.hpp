#pragma once
// Puts idle workers to sleep and wakes them when work arrives, without lost wake-ups and
// without a system call on the hot path while some worker is already looking for work.
//
// A worker searching for work is "spinning"; one that gave up is "sleeping" on `epoch_`.
// Producers wake a sleeper only when nobody is spinning (a spinner will find the work), and a
// spinner that finds work while more is queued wakes a sleeper if it was the last spinner, so
// parallelism ramps up one worker at a time — the scheme of Go's scheduler.
//
// There is one notifier per worker priority, because a CPU-priority spinner cannot take GPU
// work: GPU work is announced to the GPU-priority group only; CPU work to the CPU group, and to
// the GPU group when the CPU group has nobody to take it. A spin budget shared by the groups
// caps how many workers spin at once, so idle workers do not crowd out the threads that produce
// work (on two cores, two spinning workers would starve the caller of parallel_for).

#include <atomic>
#include <cstdint>

#include <tessera/sched/detail/work_stealing_deque.hpp>

namespace tessera::detail {

class IdleNotifier {
public:
  IdleNotifier(std::atomic<int>& spin_budget_used, int max_spinning)
      : budget_used_(spin_budget_used), max_spinning_(max_spinning < 1 ? 1 : max_spinning) {}

  /// Producer side: call after publishing work this group can take. Returns whether someone in
  /// the group will see it (a spinner, or a sleeper it woke).
  bool notify_work() noexcept {
    // Pairs with the sleeper's counter updates before its last look at the queues (Dekker):
    // either we see it counted, or it sees our work.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (spinning_.load(std::memory_order_relaxed) > 0) return true;
    if (sleeping_.load(std::memory_order_relaxed) == 0) return false;
    wake_one();
    return true;
  }

  /// Counts the caller as spinning; returns false when the shared budget is spent, in which
  /// case the caller should go straight to sleep (still through prepare_sleep).
  bool begin_spinning() noexcept {
    spinning_.fetch_add(1, std::memory_order_seq_cst);
    return budget_used_.fetch_add(1, std::memory_order_seq_cst) < max_spinning_;
  }

  /// Called by a spinner that found work. When more work is queued and it was the last
  /// spinner, it wakes a sleeper to look for that work.
  void found_work(bool more_work_queued) noexcept {
    budget_used_.fetch_sub(1, std::memory_order_seq_cst);
    if (spinning_.fetch_sub(1, std::memory_order_seq_cst) == 1 && more_work_queued &&
        sleeping_.load(std::memory_order_seq_cst) > 0)
      wake_one();
  }

  /// Called by a spinner giving up without work (shutdown).
  void stop_spinning() noexcept {
    budget_used_.fetch_sub(1, std::memory_order_seq_cst);
    spinning_.fetch_sub(1, std::memory_order_seq_cst);
  }

  /// First half of going to sleep: after this, re-check every queue, then commit or cancel.
  std::uint32_t prepare_sleep() noexcept {
    std::uint32_t e = epoch_.load(std::memory_order_seq_cst);
    sleeping_.fetch_add(1, std::memory_order_seq_cst);
    budget_used_.fetch_sub(1, std::memory_order_seq_cst);
    spinning_.fetch_sub(1, std::memory_order_seq_cst);
    return e;
  }

  /// The re-check found work: back to spinning (the caller then calls found_work()).
  void cancel_sleep() noexcept {
    spinning_.fetch_add(1, std::memory_order_seq_cst);
    budget_used_.fetch_add(1, std::memory_order_seq_cst);
    sleeping_.fetch_sub(1, std::memory_order_seq_cst);
  }

  /// Sleeps until woken (returns at once if a wake-up came since prepare_sleep), then spins.
  void commit_sleep(std::uint32_t epoch) noexcept {
    epoch_.wait(epoch, std::memory_order_seq_cst);
    spinning_.fetch_add(1, std::memory_order_seq_cst);
    budget_used_.fetch_add(1, std::memory_order_seq_cst);
    sleeping_.fetch_sub(1, std::memory_order_seq_cst);
  }

  void wake_all() noexcept {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    epoch_.notify_all();
  }

  int sleeping() const noexcept { return sleeping_.load(std::memory_order_relaxed); }

private:
  void wake_one() noexcept {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    epoch_.notify_one();
  }

  std::atomic<int>& budget_used_;
  const int max_spinning_;
  alignas(cache_line_size) std::atomic<std::uint32_t> epoch_{0};
  alignas(cache_line_size) std::atomic<int> spinning_{0};
  alignas(cache_line_size) std::atomic<int> sleeping_{0};
};

}  // namespace tessera::detail
