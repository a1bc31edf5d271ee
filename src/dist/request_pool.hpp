#pragma once
// Every message makes a request state and drops it once complete. A small cache of freed blocks
// per thread keeps malloc and free off that path, which a small message's round trip (a few
// hundred nanoseconds over shared memory) notices.

#include <cstddef>
#include <new>

namespace tessera::dist::detail {

/// An allocator for std::allocate_shared that recycles single-object blocks per thread. A block
/// freed on another thread (the progress thread completes most tracked requests) joins that
/// thread's cache; each cache is bounded, so none grows without end.
template <class T>
struct RecyclingAllocator {
  using value_type = T;

  RecyclingAllocator() noexcept = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    auto& c = cache();
    if (n == 1 && c.count > 0) return static_cast<T*>(c.blocks[--c.count]);
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}));
  }

  void deallocate(T* p, std::size_t n) noexcept {
    auto& c = cache();
    if (n == 1 && !c.closed && c.count < max_cached) {
      if (c.count == 0) closer();  // frees what is cached when the thread ends
      c.blocks[c.count++] = p;
      return;
    }
    ::operator delete (p, std::align_val_t{alignof(T)});
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static constexpr std::size_t max_cached = 64;

  // Trivially destructible, so it stays readable while the thread's other thread_locals (and,
  // on the main thread, static objects holding requests) are destroyed: `closed` then sends
  // every block straight back to operator delete.
  struct Cache {
    void* blocks[max_cached];
    std::size_t count;
    bool closed;
  };
  static Cache& cache() noexcept {
    thread_local Cache c{};
    return c;
  }
  struct Closer {
    ~Closer() {
      auto& c = cache();
      while (c.count > 0) ::operator delete (c.blocks[--c.count], std::align_val_t{alignof(T)});
      c.closed = true;
    }
  };
  static void closer() noexcept {
    thread_local Closer closing;
    (void)closing;
  }
};

}  // namespace tessera::dist::detail
