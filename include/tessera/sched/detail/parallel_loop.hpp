#pragma once
// The type-erased part of parallel_for/parallel_reduce: the templates in executor.hpp wrap the
// user's body into a function pointer and a context, and the compiled runtime schedules chunks.

#include <cstddef>

namespace tessera::detail {

/// How a range is cut: `count` chunks of `chunk` iterations (the last may be shorter).
struct LoopPlan {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t chunk = 1;
  std::size_t count = 0;

  std::size_t chunk_begin(std::size_t c) const noexcept { return begin + c * chunk; }
  std::size_t chunk_end(std::size_t c) const noexcept {
    std::size_t e = begin + (c + 1) * chunk;
    return e < end ? e : end;
  }
};

/// Runs chunk `c` of a plan over [lo, hi). One chunk may be run in several consecutive pieces
/// by the same thread (the first chunk is timed piece by piece); a body must carry its state
/// from one piece to the next, as parallel_reduce's per-chunk partial does.
using ChunkBody = void (*)(void* context, std::size_t c, std::size_t lo, std::size_t hi);

}  // namespace tessera::detail
