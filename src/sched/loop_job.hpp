#pragma once
// A parallel loop in flight: the caller and the helpers it posted take chunks from one counter.

#include <tessera/sched/detail/parallel_loop.hpp>
#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work_stealing_deque.hpp>

#include <atomic>
#include <exception>
#include <mutex>

namespace tessera::detail {

struct LoopJob : Task {
  LoopPlan plan;
  ChunkBody body = nullptr;
  void* context = nullptr;
  // The caller frees nothing: the last of the caller and the helpers to drop its reference
  // deletes the job, because a helper may be dequeued long after the loop has finished.
  std::atomic<int> references{0};
  alignas(cache_line_size) std::atomic<std::size_t> next_chunk{0};
  alignas(cache_line_size) std::atomic<int> participants{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  void run_chunks() noexcept {
    participants.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      std::size_t c = next_chunk.fetch_add(1, std::memory_order_seq_cst);
      if (c >= plan.count) break;
      try {
        body(context, c, plan.chunk_begin(c), plan.chunk_end(c));
      } catch (...) {
        {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
        // Skip the chunks nobody has started; far from overflow however many threads add to it.
        next_chunk.store(plan.count + (std::size_t{1} << 40), std::memory_order_seq_cst);
      }
    }
    participants.fetch_sub(1, std::memory_order_release);
  }

  void release() noexcept {
    if (references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

}  // namespace tessera::detail
