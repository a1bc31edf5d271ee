// TaskPool: per-thread caches of freed task blocks, one list per size, exchanged between
// threads in batches through shared lists under a mutex per size.
#include <tessera/task/detail/task_pool.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_TASK_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_TASK_POOL_ASAN 1
#endif
#endif
#if defined(TESSERA_TASK_POOL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace tessera::detail {

namespace {

constexpr std::size_t num_sizes = TaskPool::largest_pooled / TaskPool::granule;

struct FreeBlock {
  FreeBlock* next;
};

// A free block keeps only its link readable, so that ASan reports a task used after its free.
void poison(FreeBlock* b, std::size_t bytes) {
#if defined(TESSERA_TASK_POOL_ASAN)
  ASAN_POISON_MEMORY_REGION(reinterpret_cast<char*>(b) + sizeof(FreeBlock), bytes - sizeof(FreeBlock));
#else
  (void)b, (void)bytes;
#endif
}
void unpoison(void* b, std::size_t bytes) {
#if defined(TESSERA_TASK_POOL_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(b, bytes);
#else
  (void)b, (void)bytes;
#endif
}

struct BlockList {
  FreeBlock* head = nullptr;
  std::size_t count = 0;

  void push(FreeBlock* b) {
    b->next = head;
    head = b;
    ++count;
  }
  FreeBlock* pop() {
    FreeBlock* b = head;
    head = b->next;
    --count;
    return b;
  }
  /// Detaches the first `n` blocks (n <= count) as a list of their own.
  BlockList split_front(std::size_t n) {
    BlockList front{head, n};
    FreeBlock* last = head;
    for (std::size_t i = 1; i < n; ++i) last = last->next;
    head = last->next;
    last->next = nullptr;
    count -= n;
    return front;
  }
};

struct SharedSize {
  std::mutex mutex;
  std::vector<BlockList> lists;  // batches from threads that had too many blocks of this size
};

struct Shared {
  SharedSize sizes[num_sizes];
  std::atomic<std::size_t> created{0};
};

// Never destroyed: a thread may exit, and give its cache back, after static destruction began.
// Its blocks stay reachable from here, so leak checkers see none.
Shared& shared() {
  static Shared* const s = new Shared;
  return *s;
}

std::size_t size_index(std::size_t bytes) { return (bytes + TaskPool::granule - 1) / TaskPool::granule - 1; }
std::size_t block_bytes(std::size_t index) { return (index + 1) * TaskPool::granule; }

void give_to_shared(std::size_t index, BlockList list) {
  if (list.count == 0) return;
  SharedSize& s = shared().sizes[index];
  std::lock_guard lock(s.mutex);
  s.lists.push_back(list);
}

BlockList take_from_shared(std::size_t index) {
  SharedSize& s = shared().sizes[index];
  std::lock_guard lock(s.mutex);
  if (s.lists.empty()) return {};
  BlockList list = s.lists.back();
  s.lists.pop_back();
  return list;
}

struct ThreadCache {
  BlockList sizes[num_sizes];

  void flush() noexcept {
    for (std::size_t i = 0; i < num_sizes; ++i) give_to_shared(i, std::exchange(sizes[i], BlockList{}));
  }
};

// The fast path reads a trivial initial-exec thread_local (no guard, no __tls_get_addr); the
// owner below, whose destructor gives the blocks back at thread exit, is touched once per thread.
[[gnu::tls_model("initial-exec")]] thread_local ThreadCache* this_thread_cache = nullptr;
[[gnu::tls_model("initial-exec")]] thread_local bool this_thread_exited = false;

struct ThreadCacheOwner {
  ThreadCache cache;
  ThreadCacheOwner() { this_thread_cache = &cache; }
  ~ThreadCacheOwner() {
    this_thread_cache = nullptr;
    this_thread_exited = true;  // blocks freed by later thread_local destructors go straight back
    cache.flush();
  }
};

ThreadCache* cache_of_this_thread() {
  if (this_thread_cache != nullptr || this_thread_exited) return this_thread_cache;
  thread_local ThreadCacheOwner owner;
  return this_thread_cache;
}

}  // namespace

void* TaskPool::allocate(std::size_t bytes) {
  if (bytes == 0 || bytes > largest_pooled) return ::operator new(bytes);
  const std::size_t index = size_index(bytes);
  if (ThreadCache* c = cache_of_this_thread()) {
    BlockList& mine = c->sizes[index];
    if (mine.count == 0) mine = take_from_shared(index);
    if (mine.count != 0) {
      FreeBlock* b = mine.pop();
      unpoison(b, block_bytes(index));
      return b;
    }
  }
  shared().created.fetch_add(1, std::memory_order_relaxed);
  return ::operator new(block_bytes(index));
}

void TaskPool::deallocate(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes == 0 || bytes > largest_pooled) {
    ::operator delete(block);
    return;
  }
  const std::size_t index = size_index(bytes);
  auto* b = static_cast<FreeBlock*>(block);
  ThreadCache* c = cache_of_this_thread();
  if (c == nullptr) {  // the thread is exiting
    b->next = nullptr;
    poison(b, block_bytes(index));
    give_to_shared(index, BlockList{b, 1});
    return;
  }
  BlockList& mine = c->sizes[index];
  mine.push(b);
  poison(b, block_bytes(index));
  // A thread that only frees (a worker completing tasks) passes a batch on once it holds two,
  // keeping one for the tasks it may build itself.
  if (mine.count >= 2 * batch) give_to_shared(index, mine.split_front(batch));
}

std::size_t TaskPool::blocks_created() noexcept { return shared().created.load(std::memory_order_relaxed); }

void TaskPool::flush_this_thread() noexcept {
  if (ThreadCache* c = cache_of_this_thread()) c->flush();
}

}  // namespace tessera::detail
