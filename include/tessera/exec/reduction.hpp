#pragma once
// Reductions over tensors: reduce(ex, tensor, result, Sum{}, map) folds map(iterator) over every
// interior site into a ReductionResult. Each block reduces where it lives (CPU: per-chunk
// partials on the executor's workers; sim: on its stream; CUDA: a CUB block reduction per thread
// block), then the partials are combined in block order, so a given tensor, partitioning and
// executor always give the same answer.
//
//   tessera::ReductionResult<double> max_speed;
//   tessera::reduce(ex, state, max_speed, tessera::Max{},
//                   [] TESSERA_HOST_DEVICE (auto it) { return wave_speed(*it); });
//   if (max_speed.is_complete()) dt = cfl * dx / max_speed.value();

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <optional>
#if defined(__CUDACC__)
#include <cuda/std/limits>
#endif
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/core/ranks.hpp"
#include "tessera/device/device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/device/submit.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/cpu_block.hpp"
#include "tessera/exec/detail/cuda_reduce.hpp"
#include "tessera/exec/detail/kernel_launch.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/memory/buffer.hpp"
#include "tessera/memory/detail/stream_accesses.hpp"
#include "tessera/memory/memory_manager.hpp"
#include "tessera/sched/executor.hpp"

namespace tessera {

namespace detail {
// Identities must be usable in device code, where std::numeric_limits is host-only.
#if defined(__CUDACC__)
template <typename T>
using limits = cuda::std::numeric_limits<T>;
#else
template <typename T>
using limits = std::numeric_limits<T>;
#endif
}  // namespace detail

namespace detail {
/// Whether `x` is a NaN; false for types that have none.
template <typename T>
TESSERA_HOST_DEVICE constexpr bool is_nan(const T& x) noexcept {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}
}  // namespace detail

/// a + b, from 0.
struct Sum {
  template <typename T>
  TESSERA_HOST_DEVICE static constexpr T identity() noexcept {
    return T{};
  }
  template <typename T>
  TESSERA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const noexcept {
    return a + b;
  }
};
/// The larger, from the lowest value of T. A NaN anywhere makes the result NaN (IEEE 754-2019
/// `maximum`, not `std::fmax`, which drops it): a field with one NaN cell must not reduce to a
/// plausible number, whichever block or order the NaN is met in.
struct Max {
  /// Exact in any order (but for which of +0 and -0 wins a tie): rows are folded in lanes.
  static constexpr bool any_order = true;
  template <typename T>
  TESSERA_HOST_DEVICE static constexpr T identity() noexcept {
    return detail::limits<T>::lowest();
  }
  template <typename T>
  TESSERA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const noexcept {
    return a < b || detail::is_nan(b) ? b : a;
  }
};
/// The smaller, from the largest value of T. A NaN anywhere makes the result NaN, as for Max.
struct Min {
  /// As for Max.
  static constexpr bool any_order = true;
  template <typename T>
  TESSERA_HOST_DEVICE static constexpr T identity() noexcept {
    return detail::limits<T>::max();
  }
  template <typename T>
  TESSERA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const noexcept {
    return b < a || detail::is_nan(b) ? b : a;
  }
};

/// The value of a reduction and whether it is complete (Ripple §5.3.3): a graph's reduce nodes
/// fill it in pieces and the finalising node sets it complete; readers check the flag.
template <typename T>
class ReductionResult {
 public:
  using value_type = T;
  ReductionResult() = default;
  ReductionResult(const ReductionResult&) = delete;
  ReductionResult& operator=(const ReductionResult&) = delete;

  bool is_complete() const noexcept { return complete_.load(std::memory_order_acquire); }
  /// The reduced value. Throws tessera::Error while the reduction is not complete.
  T value() const {
    if (!is_complete())
      throw Error("ReductionResult::value(): the reduction has not completed; check is_complete() first");
    return value_;
  }
  /// Forgets the value, so the result can be reused (a graph re-run does this).
  void reset() noexcept { complete_.store(false, std::memory_order_release); }
  /// Stores the final value and marks it complete.
  void set(T value) noexcept {
    value_ = std::move(value);
    complete_.store(true, std::memory_order_release);
  }

 private:
  T value_{};
  std::atomic<bool> complete_{false};
};

namespace detail {
/// The default map: the site's value (arithmetic tensors).
struct SiteValue {
  template <typename It>
  TESSERA_HOST_DEVICE constexpr auto operator()(const It& it) const noexcept {
    return static_cast<std::remove_cvref_t<decltype(*it)>>(*it);
  }
};

/// The lanes a row is folded in (see reduce_block_rows): a tile of a Tiled record, whose lanes
/// are then one aligned vector per member, otherwise 64 bytes of R.
template <typename R, typename BA>
constexpr std::size_t reduction_lanes() {
  if constexpr (is_tiled_record_arg<BA>())
    return BA::layout::width;
  else
    return std::max<std::size_t>(1, 64 / sizeof(R));
}

/// One row of a block. `flatten`, as for for_each's strips (cpu_block.hpp): the iterators must be
/// made in here, in registers, or their constructor stays a call that stops the vectoriser.
template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
[[gnu::flatten]] R reduce_block_rows(const BA& arg, const LaunchShape<D>& launch, const Extent<D>& n, std::size_t row,
                                     const Reducer& reducer, const Map& map) {
  const auto it = site_arg(arg, launch, n.row_start(row));
  const std::size_t nx = n.sizes[0];
  auto site = [&](std::size_t x) { return static_cast<R>(map(along_x(it, static_cast<std::ptrdiff_t>(x)))); };
  if constexpr (folds_in_any_order<Reducer>() && std::is_arithmetic_v<R>) {
    // One accumulator per vector lane, folded together at the end of the row. A single one
    // chains each site's fold to the previous one, which GCC does not vectorise for Max's
    // NaN-propagating compare: folding 512^2 precomputed wavespeeds took 0.5 ms on one core,
    // where a hand-written `omp simd reduction(max)` computes and folds them in 0.25. The
    // strips are for_each's (cpu_block.hpp): each strip's iterator made from the row's, and in
    // Tiled records starting on a tile, so that every address is linear in the lane.
    constexpr std::size_t W = reduction_lanes<R, BA>();
    R lane[W];
    for (R& l : lane) l = Reducer::template identity<R>();
    std::size_t x = 0;
    for (const std::size_t head = std::min(first_tile_head(arg), nx); x < head; ++x)
      lane[x] = reducer(lane[x], site(x));
    const std::size_t strips = (nx - x) / W;
    auto fold_strip = [&](const auto& strip) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t l = 0; l < W; ++l)
        lane[l] = reducer(lane[l], static_cast<R>(map(along_x(strip, static_cast<std::ptrdiff_t>(l)))));
    };
    if constexpr (is_tiled_record_arg<BA>()) {
      // Strip k from the first tile by k whole tiles (see run_tile_cores).
      auto from_first = [&](const auto& first) {
        for (std::size_t k = 0; k < strips; ++k)
          fold_strip(strip_lane(first, static_cast<std::ptrdiff_t>(W), static_cast<std::ptrdiff_t>(k), 0));
      };
      from_first(tile_start(along_x(it, static_cast<std::ptrdiff_t>(x))));
    } else {
      for (std::size_t k = 0; k < strips; ++k) fold_strip(along_x(it, static_cast<std::ptrdiff_t>(x + k * W)));
    }
    x += strips * W;
    for (std::size_t l = 0; x < nx; ++x, ++l) lane[l] = reducer(lane[l], site(x));
    R acc = Reducer::template identity<R>();
    for (const R& l : lane) acc = reducer(acc, l);
    return acc;
  } else {
    R acc = Reducer::template identity<R>();
    for (std::size_t x = 0; x < nx; ++x) acc = reducer(acc, site(x));
    return acc;
  }
}

template <typename R, std::size_t D, typename BA, typename Reducer, typename Map>
R reduce_block_on_cpu(Executor* executor, const BA& arg, const LaunchShape<D>& launch, const Extent<D>& n,
                      const Reducer& reducer, const Map& map) {
  std::size_t rows = 1;
  for (std::size_t d = 1; d < D; ++d) rows *= n.sizes[d];
  if (n.volume() == 0) return Reducer::template identity<R>();
  if (executor == nullptr || rows == 1) {
    R acc = Reducer::template identity<R>();
    for (std::size_t row = 0; row < rows; ++row) acc = reducer(acc, reduce_block_rows<R>(arg, launch, n, row, reducer, map));
    return acc;
  }
  return executor->parallel_reduce(
      std::size_t{0}, rows, Reducer::template identity<R>(),
      [&](std::size_t row, R& acc) { acc = reducer(acc, reduce_block_rows<R>(arg, launch, n, row, reducer, map)); },
      [&](R a, R b) { return reducer(a, b); });
}
}  // namespace detail

namespace detail {

/// Reduces block b of `tensor` into `*slot`. A device block is submitted to its block stream
/// (Device::block_stream, as for_each uses), `*slot` is written when the stream gets there, and
/// the event that ends it is returned; a host block (or any block, with `on_host`) is reduced
/// now, on `executor`'s workers (the caller alone when null), and no event is returned.
template <typename R, TensorLike Tn, typename Reducer, typename Map, typename Variant = build_variant>
std::optional<Event> reduce_block(Executor* executor, Tn& tensor, std::size_t b, const Reducer& reducer, const Map& map,
                                  R* slot, bool on_host = false) {
  constexpr std::size_t D = Tn::dims;
  using Arg = TensorBlockArg<typename Tn::value_type, D, typename Tn::layout_type>;
  LaunchShape<D> launch;
  launch.global_size = tensor.size();
  for (std::size_t d = 0; d < D; ++d) launch.block_size.sizes[d] = 1;
  const Extent<D> n = tensor.geometry(b).interior.extent();
  const std::size_t space = tensor.space(b);
  if (space == 0 || on_host) {
    Buffer& buffer = tensor.buffer(b);
    auto* data = static_cast<std::byte*>(buffer.request(Access::read).get());
    struct Release {
      Buffer& b;
      ~Release() { b.release(Access::read); }
    } release{buffer};
    *slot = reduce_block_on_cpu<R>(executor, Arg{data, tensor.geometry(b)}, launch, n, reducer, map);
    return std::nullopt;
  }
  Device& device = tensor.memory().device(space);
  auto work = [&] { return "tessera::reduce: block " + std::to_string(b) + " of tensor '" + tensor.name() + "'"; };
  return submit(device.block_stream(b), {}, [&](Stream& stream) {
    StreamAccesses prepared(space, stream);
    const Arg arg{prepared.prepare(tensor.buffer(b), Access::read), tensor.geometry(b)};
    launch_on_stream(
        stream, [&] { return tensor.name() + " reduce"; },
        [slot, arg, launch, n, reducer, map] { *slot = reduce_block_on_cpu<R>(nullptr, arg, launch, n, reducer, map); },
        [&](void* native_stream) {
          cuda_body<Variant>(native_stream, device, work, [&](auto) {
            reduce_block_on_cuda<R>(device, stream, arg, launch, n, reducer, map, slot);
          });
        });
    prepared.finish();
  });
}

/// The blocks' partials of a reduction over `tensor`, combined in block order; for a
/// distributed tensor, every rank's total combined in rank order (the same on every rank).
/// Collective over the tensor's ranks.
template <TensorLike Tn, typename R, typename Reducer>
R combine_partials(Tn& tensor, const std::vector<R>& partials, const Reducer& reducer) {
  R total = fold_in_order(partials.data(), partials.size(), reducer);
  if constexpr (requires { tensor.ranks(); }) {
    if (Ranks* ranks = tensor.ranks()) {
      static_assert(std::is_trivially_copyable_v<R>, "a reduction over ranks sends its value as bytes");
      std::vector<R> all(static_cast<std::size_t>(ranks->size()));
      all_gather(*ranks, tensor.collective_channel(), &total, sizeof(R), all.data());
      total = fold_in_order(all.data(), all.size(), reducer);
    }
  }
  return total;
}
}  // namespace detail

/// Folds `map(it)` over every interior site of `tensor` with `reducer` (Sum, Max, Min, or any
/// type with the same two members) into `result`, which is complete on return. Blocks on CUDA
/// devices need this call compiled by nvcc.
template <TensorLike Tn, typename R, typename Reducer, typename Map = detail::SiteValue,
          typename Variant = detail::build_variant>
void reduce(Executor& executor, Tn& tensor, ReductionResult<R>& result, const Reducer& reducer, const Map& map = {}) {
  result.reset();
  const std::size_t blocks = tensor.num_blocks();
  std::vector<R> partials(blocks, Reducer::template identity<R>());
  std::vector<Event> pending;
  // Device blocks first (they only enqueue), then host blocks, then wait for the devices.
  for (std::size_t b = 0; b < blocks; ++b) {
    if (tensor.space(b) == 0) continue;
    if (std::optional<Event> done = detail::reduce_block<R>(&executor, tensor, b, reducer, map, &partials[b]))
      pending.push_back(std::move(*done));
  }
  for (std::size_t b = 0; b < blocks; ++b)
    if (tensor.space(b) == 0) detail::reduce_block<R>(&executor, tensor, b, reducer, map, &partials[b]);
  for (Event& e : pending) e.synchronize();
  result.set(detail::combine_partials(tensor, partials, reducer));
}

}  // namespace tessera
