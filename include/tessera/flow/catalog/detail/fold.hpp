#pragma once
// Internal: deterministic folds for the catalog's reductions. An array is cut into chunks of a
// fixed size and each chunk folded over a fixed number of interleaved lanes; the chunk results
// are folded in chunk order. The cut depends only on the array's length, so a result has the
// same bits on the host (chunks on the workers), a simulated device and a GPU (a thread per
// chunk), for any number of workers. The lanes let the CPU vectorise a sum.

#include <array>
#include <cstddef>
#include <string_view>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/context.hpp"

namespace tessera::flow::detail {

inline constexpr std::size_t fold_chunk = 4096;
inline constexpr std::size_t fold_lanes = 8;

inline std::size_t fold_chunks(std::size_t n) { return n == 0 ? 1 : (n + fold_chunk - 1) / fold_chunk; }

/// op-fold of load(i) for i in [lo, hi), lane by lane, lanes joined in order.
template <typename T, typename Op, typename Load>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE T fold_range(std::size_t lo, std::size_t hi, const T& identity, const Op& op,
                                                      const Load& load) {
  T lane[fold_lanes];
  for (std::size_t l = 0; l < fold_lanes; ++l) lane[l] = identity;
  std::size_t i = lo;
  for (; i + fold_lanes <= hi; i += fold_lanes)
    for (std::size_t l = 0; l < fold_lanes; ++l) lane[l] = op(lane[l], load(i + l));
  for (std::size_t l = 0; i < hi; ++i, ++l) lane[l] = op(lane[l], load(i));
  T acc = identity;
  for (std::size_t l = 0; l < fold_lanes; ++l) acc = op(acc, lane[l]);
  return acc;
}

/// A 0-d array holding finish(fold of load(i), i in [0, n)), made where the firing runs: one
/// launch folds each chunk into a scratch array, one joins the chunks in order. Two kernels.
template <typename Variant, typename T, typename Op, typename Load, typename Finish>
Allocated<T, 0> fold_to_scalar(Context& c, std::string_view name, std::size_t n, T identity, Op op, Load load,
                               Finish finish) {
  const std::size_t chunks = fold_chunks(n);
  auto partial = c.allocate<T>(std::array<std::size_t, 1>{chunks});
  auto result = c.allocate<T>(std::array<std::size_t, 0>{});
  T* const partials = partial.data;
  T* const out = result.data;
  auto per_chunk = [=] TESSERA_HOST_DEVICE(std::size_t k) {
    const std::size_t lo = k * fold_chunk;
    const std::size_t hi = lo + fold_chunk < n ? lo + fold_chunk : n;
    partials[k] = fold_range(lo, hi, identity, op, load);
  };
  c.launch<decltype(per_chunk), Variant>(name, chunks, per_chunk);
  auto join = [=] TESSERA_HOST_DEVICE(std::size_t) {
    T acc = identity;
    for (std::size_t k = 0; k < chunks; ++k) acc = op(acc, partials[k]);
    out[0] = finish(acc);
  };
  c.launch<decltype(join), Variant>(name, 1, join);
  return result;
}

}  // namespace tessera::flow::detail
