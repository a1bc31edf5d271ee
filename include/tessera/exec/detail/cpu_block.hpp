#pragma once
// The CPU loop over one block: rows (and, for short row counts, chunks of a row) go to the
// executor's workers; within a row the x sites run in strips of the virtual vector length under
// `omp simd` (targetDP §III.C), so the compiler sees VVL independent lanes whose addresses are
// linear in the lane in every layout (Tiled strips start on a tile boundary for that).

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>

#include "tessera/core/index.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/layout/layout.hpp"
#include "tessera/sched/executor.hpp"

namespace tessera::detail {

/// 64 bytes' worth of the element's first scalar; a tile for Tiled<V>.
template <typename A>
constexpr std::size_t natural_vvl() {
  if constexpr (is_tensor_block_arg<A>::value) {
    using T = typename A::value_type;
    using L = typename A::layout;
    if constexpr (is_tiled<L>::value) {
      return L::width;
    } else if constexpr (std::is_arithmetic_v<T>) {
      return std::max<std::size_t>(1, 64 / sizeof(T));
    } else {
      return std::max<std::size_t>(1, 64 / sizeof(typename T::descriptor::template scalar<0>));
    }
  } else {
    return 0;
  }
}

template <typename... A>
constexpr std::size_t default_vvl() {
  std::size_t v = 0;
  ((v = v == 0 ? natural_vvl<A>() : v), ...);
  return v == 0 ? 16 : v;
}

/// Sites before the first x at which the first Tiled argument's tiles start (0 if none is tiled).
template <typename A>
std::size_t tile_head(const A& a) {
  if constexpr (is_tensor_block_arg<A>::value) {
    using T = typename A::value_type;
    using L = typename A::layout;
    if constexpr (is_tiled<L>::value && !std::is_arithmetic_v<T>) {
      const std::size_t pad = static_cast<std::size_t>(a.geometry.padding.coords[0]);
      return (L::width - pad % L::width) % L::width;
    }
  }
  return static_cast<std::size_t>(-1);
}
template <typename... A>
std::size_t first_tile_head(const A&... a) {
  std::size_t h = static_cast<std::size_t>(-1);
  ((h = h == static_cast<std::size_t>(-1) ? tile_head(a) : h), ...);
  return h == static_cast<std::size_t>(-1) ? 0 : h;
}

template <std::size_t D, typename F, typename... A>
void run_block_on_cpu(Executor* executor, const ExecOptions& options, const LaunchShape<D>& launch,
                      const Extent<D>& n, F& kernel, const A&... args) {
  const std::size_t nx = n.sizes[0];
  std::size_t rows = 1;
  for (std::size_t d = 1; d < D; ++d) rows *= n.sizes[d];
  if (nx == 0 || rows == 0) return;

  std::size_t vvl = options.vvl != 0 ? options.vvl : default_vvl<A...>();
  const std::size_t head = std::min(first_tile_head(args...), nx);

  // Few rows (1-D tensors, thin slabs): cut rows into chunks too, so every worker gets work.
  const std::size_t workers = executor ? executor->num_workers() : 1;
  std::size_t chunks_per_row = 1;
  if (rows < 4 * workers && nx >= 2 * 4096) chunks_per_row = std::min<std::size_t>(4 * workers, nx / 4096);
  std::size_t chunk = (nx + chunks_per_row - 1) / chunks_per_row;
  chunk = (chunk + vvl - 1) / vvl * vvl;

  auto run_item = [&](std::size_t item) {
    const std::size_t row = item / chunks_per_row;
    const std::size_t part = item % chunks_per_row;
    std::size_t x_begin = part * chunk;
    std::size_t x_end = std::min(nx, x_begin + chunk);
    if (x_begin >= x_end) return;

    Index<D> local{};
    std::size_t r = row;
    for (std::size_t d = 1; d < D; ++d) {
      local.coords[d] = static_cast<std::int64_t>(r % n.sizes[d]);
      r /= n.sizes[d];
    }
    auto starts = std::make_tuple(site_arg(args, launch, local)...);
    auto one = [&](std::size_t x) {
      std::apply([&](const auto&... s) { kernel(along_x(s, static_cast<std::ptrdiff_t>(x))...); }, starts);
    };

    std::size_t x = x_begin;
    // Up to the first tile boundary (and the head of chunks that start mid-tile): one by one.
    const std::size_t aligned_from =
        x < head ? head : head + (x - head + vvl - 1) / vvl * vvl;
    for (; x < std::min(aligned_from, x_end); ++x) one(x);
    for (; x + vvl <= x_end; x += vvl) {
      auto bases = std::apply(
          [&](const auto&... s) { return std::make_tuple(tile_aligned(along_x(s, static_cast<std::ptrdiff_t>(x)))...); },
          starts);
      std::apply(
          [&](const auto&... b) {
#pragma omp simd
            for (std::size_t lane = 0; lane < vvl; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
          },
          bases);
    }
    for (; x < x_end; ++x) one(x);
  };

  const std::size_t items = rows * chunks_per_row;
  if (executor != nullptr && items > 1) {
    executor->parallel_for(0, items, run_item, options.rows_per_task);
  } else {
    for (std::size_t i = 0; i < items; ++i) run_item(i);
  }
}

}  // namespace tessera::detail
