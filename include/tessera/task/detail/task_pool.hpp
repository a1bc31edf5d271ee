#pragma once
// Internal: where TaskState objects live. A task is allocated on the thread that builds it and
// usually freed on a worker that completed it; with malloc each such free is a cross-thread
// free (the allocator's arena lock, cache lines moving back), and a program that submits from
// one thread keeps paying it. The pool keeps freed blocks in a cache per thread and moves them
// between threads in batches: the submitting thread takes a batch of blocks its workers freed
// with one lock, not one per task.

#include <cstddef>

namespace tessera::detail {

class TaskPool {
public:
  /// Blocks are a multiple of this: two tasks never share a cache line.
  static constexpr std::size_t granule = 64;
  /// Larger requests (a kernel that captures a lot) go to operator new directly.
  static constexpr std::size_t largest_pooled = 1024;
  /// Blocks a thread hands to others at once; it keeps up to twice this many of each size.
  static constexpr std::size_t batch = 64;

  /// A block of at least `bytes`, aligned for any ordinary type.
  static void* allocate(std::size_t bytes);
  /// Gives back a block from allocate(`bytes`), on any thread.
  static void deallocate(void* block, std::size_t bytes) noexcept;

  /// Blocks obtained from operator new since the program started (reuse keeps this flat).
  static std::size_t blocks_created() noexcept;
  /// Moves the calling thread's cached blocks to the shared lists, where any thread takes them.
  static void flush_this_thread() noexcept;
};

}  // namespace tessera::detail
