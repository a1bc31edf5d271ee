#pragma once
// The pieces of reduce_into (exec/reduce_into.hpp) that the kernel engine sees: a reduction as
// an argument of for_each or Graph::split, one slot per block for its partial, and the handle
// a kernel stores its site's contribution through.
//
// On the CPU a row's contributions go to a scratch row, one value per site, folded once the row
// has run: the stores are the vector stores of the row's strips, into memory that stays in L1,
// where a tensor of contributions costs a write and a read of memory per site. On a sim device
// the same code runs on the stream's thread. On CUDA a thread's contribution stays in a register
// and each thread block folds its threads' into one partial (cuda_block.hpp), which reduce()'s
// CUDA reduction then folds: one value per site written to device scratch and read back cost
// 16 bytes of traffic a site, a quarter of the 64 an euler2d sweep moves.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/exec/detail/independent_lanes.hpp"
#include "tessera/tensor/indexed_iterator.hpp"

namespace tessera {

struct Max;  // exec/reduction.hpp, which includes this header
struct Min;

/// A site's share of a reduction, as a kernel gets it: `*c = value` stores it (the last store
/// counts; a site that stores nothing contributes the reducer's identity). It reads back what
/// was stored, so a kernel may also fold several values: `*c = std::max(*c, v)`.
template <typename R>
struct Contribution {
  R* site;
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE R& operator*() const noexcept { return *site; }
};

}  // namespace tessera

namespace tessera::detail {

template <typename S>
struct is_contribution : std::false_type {};
template <typename R>
struct is_contribution<Contribution<R>> : std::true_type {};

/// A reduction argument as for_each hands it to a block's launch: where each block's partial
/// goes (slot b for block b).
template <typename R, typename Reducer>
struct ReductionSlots {
  R* slots;
  Reducer reducer;
};
/// One block's part of it: the block's partial goes to `*slot`.
template <typename R, typename Reducer>
struct ReduceBlockArg {
  using value_type = R;
  R* slot;
  Reducer reducer;
};
/// On a CUDA device: one partial per thread block of the launch (`count`, indexed by the
/// thread block's linear index in the grid), folded after the kernel into `*slot`.
template <typename R, typename Reducer>
struct DeviceReduceArg {
  using value_type = R;
  R* partials;
  std::size_t count;
  R* slot;  // where the block's partial goes, as in ReduceBlockArg
  Reducer reducer;
};

template <typename A>
struct is_device_reduce_arg : std::false_type {};
template <typename R, typename Reducer>
struct is_device_reduce_arg<DeviceReduceArg<R, Reducer>> : std::true_type {};

/// `count` values from `values` folded in order from the reducer's identity: how blocks'
/// partials and ranks' totals are combined wherever that happens (a final node on the host or
/// on a device, the CUDA combine kernel), so every place gives the same bits.
template <typename R, typename Reducer>
TESSERA_HOST_DEVICE R fold_in_order(const R* values, std::size_t count, const Reducer& reducer) {
  R acc = Reducer::template identity<R>();
  for (std::size_t i = 0; i < count; ++i) acc = reducer(acc, values[i]);
  return acc;
}

/// The first of `args` whose type satisfies Is (the caller knows there is one).
template <template <typename> class Is, typename A0, typename... A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const auto& first_arg(const A0& a0, const A&... rest) {
  if constexpr (Is<A0>::value)
    return a0;
  else
    return first_arg<Is>(rest...);
}

/// The DeviceReduceArg among `args` (the caller knows there is one).
template <typename... A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const auto& device_reduce_arg(const A&... args) {
  return first_arg<is_device_reduce_arg>(args...);
}

template <typename A>
struct is_reduction_slots : std::false_type {};
template <typename R, typename Reducer>
struct is_reduction_slots<ReductionSlots<R, Reducer>> : std::true_type {};
template <typename A>
struct is_reduce_block_arg : std::false_type {};
template <typename R, typename Reducer>
struct is_reduce_block_arg<ReduceBlockArg<R, Reducer>> : std::true_type {};

template <typename... A>
constexpr std::size_t count_reduce_block_args() {
  return (std::size_t{is_reduce_block_arg<A>::value} + ... + 0);
}

/// The ReduceBlockArg among `args` (the caller knows there is one).
template <typename... A>
const auto& reduce_block_arg(const A&... args) {
  return first_arg<is_reduce_block_arg>(args...);
}

/// The identity of the reducer of the ReduceBlockArg among `args` (T{} when there is none).
template <typename T, typename... A>
T partial_identity(const A&... args) {
  if constexpr (count_reduce_block_args<A...>() > 0)
    return decltype(reduce_block_arg(args...).reducer)::template identity<T>();
  else
    return T{};
}

/// The value type and the reducer of the first ReduceBlockArg or DeviceReduceArg among A, or
/// void and void.
template <typename... A>
struct reduce_arg_types {
  using value = void;
  using reducer = void;
};
template <typename A0, typename... A>
struct reduce_arg_types<A0, A...> : reduce_arg_types<A...> {};
template <typename R, typename Reducer, typename... A>
struct reduce_arg_types<ReduceBlockArg<R, Reducer>, A...> {
  using value = R;
  using reducer = Reducer;
};
template <typename R, typename Reducer, typename... A>
struct reduce_arg_types<DeviceReduceArg<R, Reducer>, A...> {
  using value = R;
  using reducer = Reducer;
};
template <typename... A>
struct reduced_type {
  using type = typename reduce_arg_types<A...>::value;
};
template <typename... A>
struct reducer_type {
  using type = typename reduce_arg_types<A...>::reducer;
};

// A contribution moves along a row like a tensor iterator of a one-row Strided tensor, in every
// layout: the strip loops of cpu_block.hpp address it with the same calls as the tensors.
template <typename R>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Contribution<R> along_x(const Contribution<R>& c, std::ptrdiff_t n) noexcept {
  return Contribution<R>{c.site + n};
}
template <typename R>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Contribution<R> tile_aligned(const Contribution<R>& c) noexcept {
  return c;
}
template <typename R>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Contribution<R> tile_start(const Contribution<R>& c) noexcept {
  return c;
}
template <typename R>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE Contribution<R> strip_lane(const Contribution<R>& c, std::ptrdiff_t strip_sites,
                                                                   std::ptrdiff_t strip, std::ptrdiff_t lane) noexcept {
  return Contribution<R>{c.site + strip * strip_sites + lane};
}

/// The scratch row a CPU thread's contributions go to: `sites` values and a margin on either
/// side, so that the strip loops may form (never use) addresses a tile before the row's start,
/// as they do for tensors. One per thread and type, kept: a row is run whole by one thread.
template <typename R>
R* cpu_contribution_row(std::size_t sites) {
  constexpr std::size_t margin = 64;
  thread_local std::vector<R> row;
  if (row.size() < sites + 2 * margin) row.resize(sites + 2 * margin);
  return row.data() + margin;
}

/// Sets `count` contributions from `site` to the identity of `a`'s reducer.
template <typename R, typename Reducer>
void clear_contributions(const ReduceBlockArg<R, Reducer>&, R* site, std::size_t count) {
  std::fill(site, site + count, Reducer::template identity<R>());
}

/// Whether `Reducer` says its result does not depend on the order values are folded in
/// (`static constexpr bool any_order = true`), so a row may be folded in vector lanes.
template <typename Reducer>
constexpr bool folds_in_any_order() {
  if constexpr (requires { Reducer::any_order; })
    return Reducer::any_order;
  else
    return false;
}

/// A CPU row's reduction folded in vector lanes as its strips run (cpu_block.hpp), for reducers
/// that declare their result does not depend on the order (Max, Min): each site's contribution
/// goes to a local the compiler keeps in a register and is folded straight into its lane's
/// accumulator. Through a scratch row the contributions cost a store a site, a clear of the row
/// and a fold of it: the Jacobi3D stencil with its change reduced that way moved 12.3-12.8 GB/s
/// on one core at 128^3 against 17-18 for the stencil alone, and 13.8-14.4 with the lane fold.
template <typename R, typename Reducer, std::size_t N>
struct LaneTotal {
  static_assert(N > 0);
  using value_type = R;
  Reducer reducer;
  // One accumulator per lane of a strip, kept across the rows of a worker's item and folded
  // once at its end, not at each row's (eight dependent compare-and-branch steps for `Max`).
  R lanes[N];
  explicit LaneTotal(const Reducer& r) : reducer(r) {
    for (R& l : lanes) l = identity();
  }
  static constexpr R identity() noexcept { return Reducer::template identity<R>(); }
  /// Folds one more value in (a site outside the strips).
  void add(const R& v) { lanes[0] = reducer(lanes[0], v); }
  R total() const { return fold_in_order(lanes, N, reducer); }
};
/// What a row without a lane fold passes instead.
struct NoLaneTotal {
  using value_type = char;
};

/// Whether a CPU row may fold reduce_into's contributions in lanes (LaneTotal).
template <typename R, typename Reducer>
constexpr bool folds_in_lanes() {
  if constexpr (std::is_void_v<R>)
    return false;
  else
    return std::is_arithmetic_v<R> && folds_in_any_order<Reducer>();
}

/// The largest (Largest) or smallest of `count` floating-point values from `site`, as `omp simd`
/// max or min reductions, whose lanes stay in registers: through Max's NaN-aware compare GCC kept
/// them in memory, and a 64-site row took 36 ns, a third of the Jacobi3D sweep's time. With 16-
/// or 32-byte vectors a 64-site row is a chain of 16 or more dependent steps, so the four quarters
/// of the range run as four chains (20 ns with SSE2; one chain: 30). With AVX-512 the chain is 8
/// steps and one is faster: GCC spills four chains' accumulators to the stack (a 128^3 sweep
/// 10 % slower with them).
/// These reductions leave what a NaN does unspecified, so a sum of the values rides along and, when it
/// is not finite (a NaN, an infinity or an overflow somewhere), nothing is returned and the
/// caller folds the exact way.
template <bool Largest, typename R>
std::optional<R> fold_extreme(const R* site, std::size_t count) {
  static_assert(std::is_floating_point_v<R>);
  constexpr R start = Largest ? std::numeric_limits<R>::lowest() : std::numeric_limits<R>::max();
  auto pick = [](R best, R v) {
    if constexpr (Largest)
      return best < v ? v : best;
    else
      return v < best ? v : best;
  };
#if defined(__AVX512F__)
  R best = start, probe = 0;
  if constexpr (Largest) {
#pragma omp simd reduction(max : best) reduction(+ : probe)
    for (std::size_t x = 0; x < count; ++x) best = pick(best, site[x]), probe += site[x];
  } else {
#pragma omp simd reduction(min : best) reduction(+ : probe)
    for (std::size_t x = 0; x < count; ++x) best = pick(best, site[x]), probe += site[x];
  }
#else
  R b0 = start, b1 = start, b2 = start, b3 = start;
  R p0 = 0, p1 = 0, p2 = 0, p3 = 0;
  const std::size_t q = count / 4;
  const R *s0 = site, *s1 = site + q, *s2 = site + 2 * q, *s3 = site + 3 * q;
  if constexpr (Largest) {
#pragma omp simd reduction(max : b0, b1, b2, b3) reduction(+ : p0, p1, p2, p3)
    for (std::size_t x = 0; x < q; ++x) {
      b0 = pick(b0, s0[x]), b1 = pick(b1, s1[x]), b2 = pick(b2, s2[x]), b3 = pick(b3, s3[x]);
      p0 += s0[x], p1 += s1[x], p2 += s2[x], p3 += s3[x];
    }
  } else {
#pragma omp simd reduction(min : b0, b1, b2, b3) reduction(+ : p0, p1, p2, p3)
    for (std::size_t x = 0; x < q; ++x) {
      b0 = pick(b0, s0[x]), b1 = pick(b1, s1[x]), b2 = pick(b2, s2[x]), b3 = pick(b3, s3[x]);
      p0 += s0[x], p1 += s1[x], p2 += s2[x], p3 += s3[x];
    }
  }
  for (std::size_t x = 4 * q; x < count; ++x) b0 = pick(b0, site[x]), p0 += site[x];
  const R best = pick(pick(b0, b1), pick(b2, b3)), probe = (p0 + p1) + (p2 + p3);
#endif
  if (!(probe - probe == 0)) return std::nullopt;
  return best;
}

/// Folds `count` contributions from `site` with `reducer`: in vector lanes where its result does
/// not depend on the order (as reduce() folds a row), else in site order.
template <typename R, typename Reducer>
R fold_contributions(const R* site, std::size_t count, const Reducer& reducer) {
  if constexpr (std::is_floating_point_v<R> && (std::is_same_v<Reducer, Max> || std::is_same_v<Reducer, Min>))
    if (const std::optional<R> v = fold_extreme<std::is_same_v<Reducer, Max>>(site, count)) return *v;
  if constexpr (std::is_arithmetic_v<R> && folds_in_any_order<Reducer>()) {
    constexpr std::size_t W = std::max<std::size_t>(1, 64 / sizeof(R));
    R lane[W];
    for (R& l : lane) l = Reducer::template identity<R>();
    std::size_t x = 0;
    for (; x + W <= count; x += W) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t l = 0; l < W; ++l) lane[l] = reducer(lane[l], site[x + l]);
    }
    for (std::size_t l = 0; l < count - x; ++l) lane[l] = reducer(lane[l], site[x + l]);
    return fold_in_order(lane, W, reducer);
  } else {
    return fold_in_order(site, count, reducer);
  }
}

}  // namespace tessera::detail
