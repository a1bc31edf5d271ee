#pragma once
// A parallel loop in flight. The chunks are dealt out in equal contiguous shares, one per
// participant (the caller and each helper, in order of arrival), and a participant that finishes
// its share takes chunks from the others'. Shares keep a thread on the same part of the data
// from one loop to the next, as OpenMP's static schedule does, and keep the counters apart;
// taking from the others' shares balances uneven work and covers helpers that never arrive.
//
// The job lives on the caller's stack: before returning, the caller takes back the helpers no
// worker picked up and waits for those that were, so a loop allocates nothing.

#include <tessera/sched/detail/parallel_loop.hpp>
#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work_stealing_deque.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>

namespace tessera::detail {

struct LoopJob : Task {
  struct alignas(cache_line_size) Share {
    std::atomic<std::size_t> next{0};  // next chunk index of this share
    std::size_t end = 0;               // one past its last chunk
  };

  LoopJob(const LoopPlan& p, std::size_t shares, ChunkBody b, void* ctx)
      : plan(p), body(b), context(ctx), num_shares(shares),
        heap_shares(shares > inline_shares ? std::make_unique<Share[]>(shares) : nullptr) {
    Share* s = share_array();
    for (std::size_t k = 0; k < shares; ++k) {
      s[k].next.store(k * plan.count / shares, std::memory_order_relaxed);
      s[k].end = (k + 1) * plan.count / shares;
    }
  }

  /// Runs this participant's share, then helps with the others' until every chunk is taken.
  void participate() noexcept {
    const std::size_t me = arrivals.fetch_add(1, std::memory_order_relaxed) % num_shares;
    Share* s = share_array();
    for (std::size_t k = 0; k < num_shares; ++k) {
      Share& share = s[(me + k) % num_shares];
      for (;;) {
        if (share.next.load(std::memory_order_relaxed) >= share.end) break;
        const std::size_t c = share.next.fetch_add(1, std::memory_order_relaxed);
        if (c >= share.end) break;
        run_chunk(c);
      }
    }
  }

  LoopPlan plan;
  ChunkBody body;
  void* context;
  std::size_t num_shares;
  alignas(cache_line_size) std::atomic<std::size_t> arrivals{0};
  // Helpers a worker took and ran to the end; the caller waits for all it did not take back.
  alignas(cache_line_size) std::atomic<std::size_t> finished_helpers{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;

private:
  static constexpr std::size_t inline_shares = 8;

  Share* share_array() noexcept { return heap_shares ? heap_shares.get() : inline_share_storage; }

  void run_chunk(std::size_t c) noexcept {
    if (failed.load(std::memory_order_relaxed)) return;  // skip what is left after a throw
    try {
      body(context, c, plan.chunk_begin(c), plan.chunk_end(c));
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }

  Share inline_share_storage[inline_shares];
  std::unique_ptr<Share[]> heap_shares;
};

}  // namespace tessera::detail
