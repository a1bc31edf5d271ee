#pragma once
// Chase–Lev work-stealing deque in the C11 formulation of Lê, Pop, Cohen and Zappa Nardelli,
// "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), Figure 1.
// The owner pushes and pops at the bottom; any thread steals from the top.

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace tessera::detail {

inline constexpr std::size_t cache_line_size = 64;

/// Lock-free deque of pointers for one owner thread and any number of thieves.
///
///   WorkStealingDeque<Task*> dq;
///   dq.push(t);                     // owner
///   Task* mine = dq.pop();          // owner, LIFO
///   Task* stolen = dq.steal();      // any thread, FIFO; nullptr when empty or a race was lost
template <class T>
class WorkStealingDeque {
  static_assert(std::is_pointer_v<T>, "the deque stores pointers; nullptr means 'nothing'");

  struct Ring {
    explicit Ring(std::int64_t size)
        : capacity(size), mask(size - 1), slots(new std::atomic<T>[static_cast<std::size_t>(size)]) {}
    // Slots are atomics so a thief reading a slot the owner is rewriting is not a data race.
    T get(std::int64_t i) const noexcept { return slots[i & mask].load(std::memory_order_relaxed); }
    void put(std::int64_t i, T x) noexcept { slots[i & mask].store(x, std::memory_order_relaxed); }

    std::int64_t capacity;
    std::int64_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };

public:
  explicit WorkStealingDeque(std::int64_t capacity = 256) {
    std::int64_t c = 1;
    while (c < capacity) c <<= 1;
    rings_.push_back(std::make_unique<Ring>(c));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }

  WorkStealingDeque(const WorkStealingDeque&) = delete;
  WorkStealingDeque& operator=(const WorkStealingDeque&) = delete;

  /// Owner only.
  void push(T item) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_acquire);
    Ring* r = ring_.load(std::memory_order_relaxed);
    if (b - t > r->capacity - 1) r = grow(r, t, b);
    r->put(b, item);
    // The paper's release fence + relaxed store, written as a release store: equivalent for the
    // thief's acquire load of bottom, and visible to ThreadSanitizer, which ignores fences.
    bottom_.store(b + 1, std::memory_order_release);
  }

  /// Owner only. Returns nullptr when empty.
  T pop() noexcept {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    Ring* r = ring_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_relaxed);
    // Orders the bottom store before the top load: either a concurrent thief sees the smaller
    // bottom or this pop sees its incremented top. Without it both could take the last item.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T item = r->get(b);
    if (t == b) {
      // Last item: race the thieves for it on top.
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) item = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return item;
  }

  /// Any thread. Returns nullptr when empty or when another thread won the item.
  T steal() noexcept {
    std::int64_t t = top_.load(std::memory_order_acquire);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return nullptr;
    Ring* r = ring_.load(std::memory_order_acquire);
    T item = r->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) return nullptr;
    return item;
  }

  /// A snapshot; exact only when no other thread touches the deque.
  bool empty() const noexcept {
    return bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed);
  }
  std::size_t size() const noexcept {
    std::int64_t n = bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_relaxed);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  std::int64_t capacity() const noexcept { return ring_.load(std::memory_order_relaxed)->capacity; }

private:
  Ring* grow(Ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<Ring>(old->capacity * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    Ring* r = bigger.get();
    // Old rings stay alive until the deque dies: a thief may still be reading one.
    rings_.push_back(std::move(bigger));
    ring_.store(r, std::memory_order_release);
    return r;
  }

  // top is written by thieves, bottom by the owner: separate lines avoid false sharing.
  alignas(cache_line_size) std::atomic<std::int64_t> top_{0};
  alignas(cache_line_size) std::atomic<std::int64_t> bottom_{0};
  alignas(cache_line_size) std::atomic<Ring*> ring_{nullptr};
  std::vector<std::unique_ptr<Ring>> rings_;
};

}  // namespace tessera::detail
