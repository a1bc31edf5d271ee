#pragma once
// A parallel loop in flight. The chunks are dealt out in equal contiguous shares, one per
// participant (the caller and each helper, in order of arrival), and a participant that finishes
// its share takes chunks from the others'. Shares keep a thread on the same part of the data
// from one loop to the next, as OpenMP's static schedule does, and keep the counters apart;
// taking from the others' shares balances uneven work and covers helpers that arrive late.
//
// Jobs come from a small per-thread ring, so a loop allocates nothing and its caller returns as
// soon as every chunk has run, without waiting for a late helper to check in and find nothing:
// a job is reused only once every helper that took it has let go.

#include <tessera/sched/detail/parallel_loop.hpp>
#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work_stealing_deque.hpp>

#include <atomic>
#include <memory>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::detail {

struct LoopJob : Task {
  struct alignas(cache_line_size) Share {
    std::atomic<std::size_t> next{0};  // next chunk index of this share
    std::size_t end = 0;               // one past its last chunk
  };

  /// Prepares the job for a new loop; the caller has made sure no helper still holds it.
  void reset(const LoopPlan& p, std::size_t num_shares, ChunkBody b, void* ctx) {
    plan = p;
    body = b;
    context = ctx;
    if (shares.size() < num_shares) shares = std::vector<Share>(num_shares);
    shares_in_use = num_shares;
    for (std::size_t k = 0; k < num_shares; ++k) {
      shares[k].next.store(k * plan.count / num_shares, std::memory_order_relaxed);
      shares[k].end = (k + 1) * plan.count / num_shares;
    }
    arrivals.store(0, std::memory_order_relaxed);
    done_chunks.store(0, std::memory_order_relaxed);
    failed.store(false, std::memory_order_relaxed);
    error = nullptr;
    helpers_taken = 0;
    helpers_released.store(0, std::memory_order_relaxed);
  }

  /// Chunk 0 (the start of share 0) is the caller's: it has begun it already.
  void reserve_first_chunk() noexcept { shares[0].next.store(1, std::memory_order_relaxed); }

  /// Runs this participant's share, then helps with the others' until every chunk is taken;
  /// `between()` after each chunk (the worker's progress polls).
  template <typename Between>
  void participate(Between&& between) noexcept {
    const std::size_t n = shares_in_use;
    const std::size_t me = arrivals.fetch_add(1, std::memory_order_relaxed) % n;
    for (std::size_t k = 0; k < n; ++k) {
      Share& share = shares[(me + k) % n];
      while (share.next.load(std::memory_order_relaxed) < share.end) {
        const std::size_t c = share.next.fetch_add(1, std::memory_order_relaxed);
        if (c >= share.end) break;
        run_chunk(c);
        done_chunks.fetch_add(1, std::memory_order_release);
        between();
      }
    }
  }

  bool all_chunks_done() const noexcept { return done_chunks.load(std::memory_order_acquire) == plan.count; }

  /// Blocks until every helper that took this job has let go of it.
  void wait_for_helpers() const noexcept {
    for (unsigned spins = 0; helpers_released.load(std::memory_order_acquire) != helpers_taken; ++spins)
      if (spins > 64) std::this_thread::yield();
  }

  LoopPlan plan;
  ChunkBody body = nullptr;
  void* context = nullptr;
  std::vector<Share> shares;
  std::size_t shares_in_use = 0;
  alignas(cache_line_size) std::atomic<std::size_t> arrivals{0};
  alignas(cache_line_size) std::atomic<std::size_t> done_chunks{0};
  alignas(cache_line_size) std::atomic<std::size_t> helpers_released{0};
  std::size_t helpers_taken = 0;  // written by the caller once its helpers are accounted for
  bool in_use = false;            // between the caller's acquire and its return
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;

  void run_chunk(std::size_t c) noexcept { run_piece(c, plan.chunk_begin(c), plan.chunk_end(c)); }

  void run_piece(std::size_t c, std::size_t lo, std::size_t hi) noexcept {
    if (failed.load(std::memory_order_relaxed)) return;  // skip what is left after a throw
    try {
      body(context, c, lo, hi);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }
};

/// The calling thread's loop jobs. A job is free once its loop has returned and every helper
/// that took it has let go; nested loops on one thread hold several at once.
class LoopJobPool {
public:
  static LoopJobPool& for_this_thread() {
    thread_local LoopJobPool pool;
    return pool;
  }

  ~LoopJobPool() {
    for (auto& j : jobs_) j->wait_for_helpers();
  }

  /// A free job, marked in use until the returned guard goes away.
  LoopJob& acquire() {
    for (std::size_t k = 0; k < jobs_.size(); ++k) {
      LoopJob& j = *jobs_[(cursor_ + k) % jobs_.size()];
      if (!j.in_use && j.helpers_released.load(std::memory_order_acquire) == j.helpers_taken) {
        cursor_ = (cursor_ + k + 1) % jobs_.size();
        j.in_use = true;
        return j;
      }
    }
    jobs_.push_back(std::make_unique<LoopJob>());
    jobs_.back()->in_use = true;
    return *jobs_.back();
  }

private:
  std::vector<std::unique_ptr<LoopJob>> jobs_;
  std::size_t cursor_ = 0;
};

}  // namespace tessera::detail
