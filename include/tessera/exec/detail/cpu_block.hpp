#pragma once
// The CPU loop over one block: rows (and, for short row counts, chunks of a row) go to the
// executor's workers; within a row the x sites run in strips of the virtual vector length
// (targetDP §III.C) whose lanes are declared independent, so the compiler sees VVL lanes whose
// addresses are linear in the lane in every layout (Tiled strips start on a tile boundary and,
// at the default VVL, have a compile-time length, which lets it prove that). The promise is
// TESSERA_INDEPENDENT_LANES (independent_lanes.hpp says why it is not `omp simd`).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/index.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/independent_lanes.hpp"
#include "tessera/exec/detail/site_reduction.hpp"
#include "tessera/exec/detail/staged_tile.hpp"
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

template <typename A>
constexpr bool is_tiled_record_arg() {
  if constexpr (is_tensor_block_arg<A>::value)
    return is_tiled<typename A::layout>::value && !std::is_arithmetic_v<typename A::value_type>;
  else
    return false;
}
template <typename... A>
constexpr bool any_tiled_records() {
  return (is_tiled_record_arg<A>() || ...);
}
/// How far along x a kernel is expected to read from a site of a Tiled record argument: its x
/// padding, past which a read at a block's edge is out of bounds. Only speed depends on it: a
/// kernel that reads farther still gets the right values, from a core strip left scalar.
template <typename A>
std::size_t tiled_reach(const A& a) {
  if constexpr (is_tiled_record_arg<A>())
    return static_cast<std::size_t>(a.geometry.padding.coords[0]);
  else
    return 0;
}

/// How far along x a kernel reads from a site: its own `x_reach` when it declares one (a kernel
/// that reads only along y or z, say, declares 0), else `padding`, the tensors' x padding.
template <typename F>
constexpr std::size_t kernel_x_reach(std::size_t padding) {
  if constexpr (requires { F::x_reach; })
    return std::min<std::size_t>(F::x_reach, padding);
  else
    return padding;
}

/// Sites before the first x at which the first Tiled argument's tiles start (0 if none is tiled).
template <typename A>
std::size_t tile_head(const A& a) {
  if constexpr (is_tiled_record_arg<A>()) {
    constexpr std::size_t V = A::layout::width;
    const std::size_t pad = static_cast<std::size_t>(a.geometry.padding.coords[0]);
    return (V - pad % V) % V;
  } else {
    return static_cast<std::size_t>(-1);
  }
}
/// Whether a strip starting `head` sites into the row, `vvl` long, starts on a tile of `a`.
template <typename A>
bool strips_on_tiles(const A& a, std::size_t head, std::size_t vvl) {
  if constexpr (is_tiled_record_arg<A>())
    return tile_head(a) == head && vvl % A::layout::width == 0;
  else
    return true;
}

template <typename... A>
std::size_t first_tile_head(const A&... a) {
  std::size_t h = static_cast<std::size_t>(-1);
  ((h = h == static_cast<std::size_t>(-1) ? tile_head(a) : h), ...);
  return h == static_cast<std::size_t>(-1) ? 0 : h;
}

/// The kernel as a strip loop calls it: a copy in the loop's own frame when it is a small
/// trivially copyable value (a lambda's captures, a functor's constants), else the caller's.
/// Through the caller's reference every store of a double may alias a double member, so the
/// compiler reloads the members after each strip's stores and recomputes what it derives from
/// them: the Jacobi3D sweep's held-plane test (divisions by the block size) ran per strip, not
/// per row, and the tensor variant took 40 ms an iteration on 2 ranks against 33 with the copy.
template <typename F>
decltype(auto) loop_local(F& kernel) {
  if constexpr (std::is_trivially_copyable_v<F> && sizeof(F) <= 512)
    return F(kernel);
  else
    return (kernel);
}

/// A site's argument in a lane fold: a reduction's contribution goes to `cell`, any other
/// argument is passed on as it is.
template <typename S, typename R>
TESSERA_FORCE_INLINE decltype(auto) into_cell(S&& s, R* cell) {
  if constexpr (is_contribution<std::remove_cvref_t<S>>::value)
    return Contribution<R>{cell};
  else
    return std::forward<S>(s);
}

/// The lane accumulators of a lane fold while a strip loop runs, in locals so that they stay in
/// registers (loaded from the LaneTotal, stored back at the end); nothing without one.
template <std::size_t N, typename Total>
struct LaneAccumulators {
  static constexpr bool active = !std::is_same_v<Total, NoLaneTotal>;
  using R = typename Total::value_type;
  R acc[active ? N : 1];
  Total& total;
  TESSERA_FORCE_INLINE explicit LaneAccumulators(Total& t) : total(t) {
    if constexpr (active) {
      static_assert(N > 0 && sizeof(t.lanes) == sizeof(acc), "a lane fold runs strips of the natural length");
      for (std::size_t lane = 0; lane < N; ++lane) acc[lane] = t.lanes[lane];
    }
  }
  TESSERA_FORCE_INLINE ~LaneAccumulators() {
    if constexpr (active)
      for (std::size_t lane = 0; lane < N; ++lane) total.lanes[lane] = acc[lane];
  }
  LaneAccumulators(const LaneAccumulators&) = delete;
  LaneAccumulators& operator=(const LaneAccumulators&) = delete;
  /// The kernel at one site of lane `lane`, its contribution folded into that lane.
  template <typename K, typename... B>
  TESSERA_FORCE_INLINE void site(K& kernel, std::size_t lane, const B&... b) {
    R cell = Total::identity();
    kernel(into_cell(along_x(b, static_cast<std::ptrdiff_t>(lane)), &cell)...);
    acc[lane] = total.reducer(acc[lane], cell);
  }
};

/// `strips` consecutive strips from `x` of a row whose iterators start at `row_starts`.
/// `flatten` inlines the kernel into the loop however large it is: a call per site would stop
/// the vectoriser ("statement clobbers memory"). Each strip's iterators are made in here, where
/// they are scalars in registers: made by the caller and passed by reference, every strip
/// stored whole iterators (hundreds of bytes) to the stack and read them back, which cost the
/// flux kernel a quarter of its time. One call per row rather than per strip sets the kernel's
/// constants up once per row.
/// With a LaneTotal (`total`), a reduction's contributions are folded into its N lane
/// accumulators, not stored to the row's scratch (site_reduction.hpp).
template <std::size_t N, bool TileStarts, typename F, typename Total, typename... S>
[[gnu::flatten]] inline void run_strips(F& caller_kernel, std::size_t vvl, std::ptrdiff_t x, std::size_t strips,
                                        Total& total, const S&... row_starts) {
  decltype(auto) kernel = loop_local(caller_kernel);
  constexpr bool folding = LaneAccumulators<N, Total>::active;
  LaneAccumulators<N, Total> fold(total);
  auto lanes = [&](const auto&... b) {
    if constexpr (folding) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = 0; lane < N; ++lane) fold.site(kernel, lane, b...);
    } else if constexpr (N > 0) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = 0; lane < N; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
    } else {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = 0; lane < vvl; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
    }
  };
  if constexpr (TileStarts) {
    // Each strip's tile from the first one's by whole tiles, not from x (see run_tile_cores).
    auto from_first = [&](const auto&... first) {
      for (std::size_t k = 0; k < strips; ++k)
        lanes(strip_lane(first, static_cast<std::ptrdiff_t>(vvl), static_cast<std::ptrdiff_t>(k), 0)...);
    };
    from_first(tile_start(along_x(row_starts, x))...);
  } else {
    for (std::size_t k = 0; k < strips; ++k, x += static_cast<std::ptrdiff_t>(vvl))
      lanes(tile_aligned(along_x(row_starts, x))...);
  }
}

/// `tiles` consecutive tiles from `x`, for a kernel that may read `Reach` sites along x: a
/// neighbour of an edge lane lies in the next tile, at an address that is not linear in the
/// lane, and one such load kept the whole strip scalar (FORCE flux in Tiled<16>: 0.11 of the
/// SoA loop). So only each tile's core lanes, whose neighbours stay in the tile, run here: the
/// loop bounds give the compiler their range, in which the tile arithmetic folds away.
/// run_lane_across_strips does the edge lanes.
/// (A full-width strip with the edge lanes masked off vectorised only with 32-bit lane counters,
/// and then some loads became gathers; it was no faster.)
/// A lane fold (`total`, a LaneTotal) only where every lane runs here: Reach = 0.
template <std::size_t N, std::size_t Reach, typename F, typename Total, typename... S>
[[gnu::flatten]] inline void run_tile_cores(F& caller_kernel, std::ptrdiff_t x, std::size_t tiles, Total& total,
                                            const S&... row_starts) {
  decltype(auto) kernel = loop_local(caller_kernel);
  constexpr bool folding = LaneAccumulators<N, Total>::active;
  static_assert(!folding || Reach == 0, "a lane fold needs every lane of a tile");
  LaneAccumulators<N, Total> fold(total);
  auto lanes = [&](const auto&... b) {
    if constexpr (folding) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = 0; lane < N; ++lane) fold.site(kernel, lane, b...);
    } else {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = Reach; lane < N - Reach; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
    }
  };
  // Tile k is reached from the first tile by k whole tiles, so its address is linear in k: from
  // x (x >> log2 V) it was recomputed in every tile, and the compiler then addressed every
  // member through a register of its own rather than one pointer and constant displacements.
  // That alone cost the one-thread particle update in Tiled<16> doubles a quarter of its
  // bandwidth (bench/results/README.md, "the one-thread Tiled<16> gap").
  auto from_first = [&](const auto&... first) {
    for (std::size_t k = 0; k < tiles; ++k)
      lanes(strip_lane(first, static_cast<std::ptrdiff_t>(N), static_cast<std::ptrdiff_t>(k), 0)...);
  };
  from_first(tile_start(along_x(row_starts, x))...);
}

/// run_tile_cores for a tile the row covers only part of: its lanes [lo, hi) that are core lanes.
template <std::size_t N, std::size_t Reach, typename F, typename Total, typename... S>
[[gnu::flatten]] inline void run_tile_core_part(F& caller_kernel, std::ptrdiff_t x, std::size_t lo, std::size_t hi,
                                                Total& total, const S&... row_starts) {
  decltype(auto) kernel = loop_local(caller_kernel);
  constexpr bool folding = LaneAccumulators<N, Total>::active;
  static_assert(!folding || Reach == 0, "a lane fold needs every lane of a tile");
  LaneAccumulators<N, Total> fold(total);
  auto lanes = [&](const auto&... b) {
    const std::size_t to = std::min(hi, N - Reach);
    if constexpr (folding) {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = lo; lane < to; ++lane) fold.site(kernel, lane, b...);
    } else {
      TESSERA_INDEPENDENT_LANES
      for (std::size_t lane = std::max(lo, Reach); lane < to; ++lane)
        kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
    }
  };
  lanes(tile_start(along_x(row_starts, x))...);
}

/// Lane `lane` of `strips` consecutive strips from the one at `x`, one strip per vector lane: in
/// Tiled<V> layouts every address, neighbours included, is then linear in the strip (a stride of
/// one tile), so the edge lanes that run_tile_cores leaves out vectorise too.
template <typename F, typename... S>
[[gnu::flatten]] inline void run_lane_across_strips(F& caller_kernel, std::size_t strip_sites, std::size_t strips,
                                                    std::size_t lane, std::ptrdiff_t x, const S&... row_starts) {
  decltype(auto) kernel = loop_local(caller_kernel);
  auto lanes = [&](const auto&... b) {
    TESSERA_INDEPENDENT_LANES
    for (std::size_t k = 0; k < strips; ++k)
      kernel(strip_lane(b, static_cast<std::ptrdiff_t>(strip_sites), static_cast<std::ptrdiff_t>(k),
                        static_cast<std::ptrdiff_t>(lane))...);
  };
  lanes(tile_start(along_x(row_starts, x))...);
}

/// Sites [x_begin, x_end) of a row whose Tiled record arguments have tiles of N sites starting
/// at `first_tile` (and every N sites from there), for a kernel that reads up to R sites along
/// x: the core lanes of each tile as a strip, the R lanes at each tile edge across the tiles, and
/// of the partial tiles at either end the core lanes as a shorter strip and the edges one by one.
template <std::size_t N, std::size_t R, typename F, typename One, typename Starts, typename Total>
void run_row_with_reach(F& kernel, One& one, const Starts& starts, std::size_t x_begin, std::size_t x_end,
                        std::size_t first_tile, Total& total) {
  auto partial = [&](std::ptrdiff_t tile, std::size_t lo, std::size_t hi) {
    std::apply([&](const auto&... s) { run_tile_core_part<N, R>(kernel, tile, lo, hi, total, s...); }, starts);
    for (std::size_t lane = lo; lane < hi; ++lane)
      if (lane < R || lane >= N - R) one(static_cast<std::size_t>(tile + static_cast<std::ptrdiff_t>(lane)));
  };
  std::size_t x = x_begin;
  if (x < first_tile) {
    const std::ptrdiff_t tile = static_cast<std::ptrdiff_t>(first_tile) - static_cast<std::ptrdiff_t>(N);
    const std::size_t end = std::min(first_tile, x_end);
    partial(tile, static_cast<std::size_t>(static_cast<std::ptrdiff_t>(x) - tile),
            static_cast<std::size_t>(static_cast<std::ptrdiff_t>(end) - tile));
    x = end;
  }
  const std::size_t count = (x_end - x) / N;
  std::apply(
      [&](const auto&... s) { run_tile_cores<N, R>(kernel, static_cast<std::ptrdiff_t>(x), count, total, s...); },
      starts);
  if constexpr (R > 0)
    for (std::size_t lane = 0; lane < N; lane = lane + 1 == R ? N - R : lane + 1)
      std::apply(
          [&](const auto&... s) { run_lane_across_strips(kernel, N, count, lane, static_cast<std::ptrdiff_t>(x), s...); },
          starts);
  x += count * N;
  if (x < x_end) partial(static_cast<std::ptrdiff_t>(x), 0, x_end - x);
}

/// A row-start argument's part in run_row_staged: Tiled<N> record iterators are staged one tile
/// at a time (staged_tile.hpp); anything else (values, other layouts, write_only tensors, which
/// the kernel writes in place) passes through.
template <std::size_t N, std::size_t R, typename S>
struct RowStage {
  RowStage(const S& first_, std::ptrdiff_t) : first(first_) {}
  void load(std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t) {}
  void store(std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t) {}
  /// tile_start: `first` comes back from memory, where the compiler no longer knows that its
  /// lane is 0 (a write_only Tiled output ran scalar, at a fifth of the speed, without it).
  TESSERA_FORCE_INLINE auto start(std::ptrdiff_t k) const {
    return tile_start(strip_lane(first, static_cast<std::ptrdiff_t>(N), k, 0));
  }
  S first;
};

/// What the Tiled stages below share: where the row's tiles are and which of a tile's sites the
/// tensor stores.
template <std::size_t N, std::size_t R, typename T, std::size_t D, Access A>
struct TiledRow {
  using iterator = IndexedIterator<T, D, Tiled<N>, A>;
  static constexpr std::ptrdiff_t tile_bytes = static_cast<std::ptrdiff_t>(N * T::descriptor::site_bytes);
  /// `first_`: the first tile of the row's loop; `pad_`: the tensor's x padding, which with the
  /// interior's width says which halo sites exist.
  TiledRow(const iterator& first_, std::ptrdiff_t pad_) : first(first_), base(first_.site().base), pad(pad_) {}
  /// Sites of the tile at x0 (tile-relative) that lie in the stored row.
  TESSERA_FORCE_INLINE std::pair<std::ptrdiff_t, std::ptrdiff_t> span(std::ptrdiff_t x0, std::ptrdiff_t nx) const {
    return {std::max(-static_cast<std::ptrdiff_t>(R), -pad - x0),
            std::min(static_cast<std::ptrdiff_t>(N + R), nx + pad - x0)};
  }
  TESSERA_FORCE_INLINE void load_into(StagedTile<T, N, R>& stage, std::ptrdiff_t k, std::ptrdiff_t x0,
                                      std::ptrdiff_t nx) const {
    const auto [lo, hi] = span(x0, nx);
    stage.load(base + k * tile_bytes, lo, hi);
  }
  iterator first;
  std::byte* base;
  std::ptrdiff_t pad;
};

/// A tensor the kernel may read and write: each tile is staged just before it runs, and what the
/// kernel changed goes back just after, so the next tile's stage sees it.
template <std::size_t N, std::size_t R, typename T, std::size_t D>
  requires(!std::is_arithmetic_v<T>)
struct RowStage<N, R, IndexedIterator<T, D, Tiled<N>, Access::read_write>> : TiledRow<N, R, T, D, Access::read_write> {
  using TiledRow<N, R, T, D, Access::read_write>::TiledRow;
  TESSERA_FORCE_INLINE void load(std::ptrdiff_t k, std::ptrdiff_t x0, std::ptrdiff_t nx, std::ptrdiff_t) {
    this->load_into(stage, k, x0, nx);
  }
  TESSERA_FORCE_INLINE void store(std::ptrdiff_t k, std::ptrdiff_t x0, std::ptrdiff_t nx) {
    const auto [lo, hi] = this->span(x0, nx);
    stage.store_changed(this->base + k * this->tile_bytes, lo, hi);
  }
  TESSERA_FORCE_INLINE StagedTileIterator<T, D, N, R> start(std::ptrdiff_t k) {
    return StagedTileIterator<T, D, N, R>(this->first, k, stage.data());
  }
  StagedTile<T, N, R> stage;
};

/// A read_only tensor: nothing goes back, and since nothing changes it either, the next tile is
/// staged before this one runs. Staged just before use, the lane loop's first loads waited on
/// the copy's stores still in flight (loads that straddle two of them are not forwarded): the
/// hand-written AoSoA flux went from 0.6-0.7 of the SoA loop to 0.8-0.95 staged one tile ahead.
template <std::size_t N, std::size_t R, typename T, std::size_t D>
  requires(!std::is_arithmetic_v<T>)
struct RowStage<N, R, IndexedIterator<T, D, Tiled<N>, Access::read>> : TiledRow<N, R, T, D, Access::read> {
  using TiledRow<N, R, T, D, Access::read>::TiledRow;
  TESSERA_FORCE_INLINE void load(std::ptrdiff_t k, std::ptrdiff_t x0, std::ptrdiff_t nx, std::ptrdiff_t x_end) {
    if (k == 0) this->load_into(stages[0], 0, x0, nx);
    if (x0 + static_cast<std::ptrdiff_t>(N) < x_end)
      this->load_into(stages[(k + 1) & 1], k + 1, x0 + static_cast<std::ptrdiff_t>(N), nx);
  }
  void store(std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t) {}
  TESSERA_FORCE_INLINE StagedTileIterator<T, D, N, R, Access::read> start(std::ptrdiff_t k) {
    return StagedTileIterator<T, D, N, R, Access::read>(this->first, k, stages[k & 1].data());
  }
  StagedTile<T, N, R> stages[2];
};

template <typename S>
struct is_tiled_record_iterator : std::false_type {};
template <typename T, std::size_t D, std::size_t V, Access A>
  requires(!std::is_arithmetic_v<T>)
struct is_tiled_record_iterator<IndexedIterator<T, D, Tiled<V>, A>> : std::true_type {
  static constexpr std::size_t width = V;
};
template <std::size_t N, typename S>
constexpr bool has_tiles_of() {
  if constexpr (is_tiled_record_iterator<S>::value)
    return is_tiled_record_iterator<S>::width == N;
  else
    return true;
}

template <std::size_t R, typename S>
struct staged_argument {
  using type = const S&;
};
template <std::size_t R, typename T, std::size_t D, std::size_t V, Access A>
  requires(!std::is_arithmetic_v<T> && A != Access::write)
struct staged_argument<R, IndexedIterator<T, D, Tiled<V>, A>> {
  using type = StagedTileIterator<T, D, V, R, A>;
};
/// Whether run_row_staged can run `kernel` over these row starts: every Tiled record argument has
/// tiles of N sites, and the kernel takes StagedTileIterators where it took IndexedIterators (a
/// kernel written for one iterator type keeps the unstaged loop).
template <std::size_t N, std::size_t R, typename F, typename... S>
constexpr bool can_stage_rows() {
  if constexpr ((has_tiles_of<N, S>() && ...))
    return std::is_invocable_v<F&, typename staged_argument<R, S>::type...>;
  else
    return false;
}
template <std::size_t N, std::size_t R, typename F, typename Starts>
struct can_stage_tuple;
template <std::size_t N, std::size_t R, typename F, typename... S>
struct can_stage_tuple<N, R, F, std::tuple<S...>> : std::bool_constant<can_stage_rows<N, R, F, S...>()> {};

/// Sites [x_begin, x_end) of a row whose Tiled record arguments have tiles of N sites starting at
/// `first_tile`, for a kernel that reads up to R sites along x: tile by tile, each such argument
/// staged with R sites on either side (staged_tile.hpp), so that all N lanes run as one strip;
/// what the kernel changed in a stage goes back to the tensor before the next tile is staged
/// (read_only tensors, which do not change, are staged a tile ahead). Only for rows that one
/// worker runs whole: a stage reads R sites past each end of its tile.
template <std::size_t N, std::size_t R, typename F, typename... S, std::size_t... I>
[[gnu::flatten]] void run_row_staged(F& caller_kernel, const std::tuple<S...>& starts, std::index_sequence<I...>,
                                     const std::ptrdiff_t (&pads)[sizeof...(S)], std::ptrdiff_t nx,
                                     std::ptrdiff_t x_begin, std::ptrdiff_t x_end, std::ptrdiff_t first_tile) {
  decltype(auto) kernel = loop_local(caller_kernel);
  constexpr auto n = static_cast<std::ptrdiff_t>(N);
  const std::ptrdiff_t t0 = x_begin < first_tile ? first_tile - n : first_tile;
  std::tuple<RowStage<N, R, S>...> stages{
      RowStage<N, R, S>(tile_start(along_x(std::get<I>(starts), t0)), pads[I])...};
  auto full = [&](const auto&... b) {
    TESSERA_INDEPENDENT_LANES
    for (std::size_t lane = 0; lane < N; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
  };
  auto part = [&](std::size_t lo, std::size_t hi, const auto&... b) {
    hi = std::min(hi, N);
    TESSERA_INDEPENDENT_LANES
    for (std::size_t lane = lo; lane < hi; ++lane) kernel(along_x(b, static_cast<std::ptrdiff_t>(lane))...);
  };
  std::ptrdiff_t k = 0;
  for (std::ptrdiff_t x0 = t0; x0 < x_end; x0 += n, ++k) {
    (std::get<I>(stages).load(k, x0, nx, x_end), ...);
    const std::ptrdiff_t lo = std::max<std::ptrdiff_t>(x_begin - x0, 0), hi = std::min(x_end - x0, n);
    if (lo == 0 && hi == n)
      full(std::get<I>(stages).start(k)...);
    else
      part(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi), std::get<I>(stages).start(k)...);
    (std::get<I>(stages).store(k, x0, nx), ...);
  }
}

/// An argument's iterator at the start of a row (site_arg); a reduction's is the row's
/// contributions, `row` (site_reduction.hpp).
template <std::size_t D, typename A, typename Row>
TESSERA_FORCE_INLINE decltype(auto) row_start(const A& a, const LaunchShape<D>& launch, const Index<D>& local,
                                              Row* row) {
  if constexpr (is_reduce_block_arg<A>::value)
    return Contribution<Row>{row};
  else
    return site_arg(a, launch, local);
}

template <typename S>
struct is_indexed_iterator : std::false_type {};
template <typename T, std::size_t D, Layout L, Access A>
struct is_indexed_iterator<IndexedIterator<T, D, L, A>> : std::true_type {};

/// The row starts of a block's arguments as a CPU worker walks its rows: made once per chunk of
/// rows (an iterator at the block's first site for each tensor, a value as it is), then moved
/// from row to row in place. Made anew for each row, an iterator (about 200 bytes) was copied
/// through vector registers and its fields read back one by one, loads that wait until such
/// stores reach the cache (and so did the row's index, computed with two divisions): the
/// Jacobi3D sweep's 64-site rows took 0.37 ns a cell more than the same loop written by hand,
/// over the same memory (bench/results/README.md, "rows of 64 sites").
template <std::size_t D, typename Row, typename... A>
class RowStarts {
 public:
  RowStarts(const LaunchShape<D>& launch, const Extent<D>& n, const A&... args)
      : starts_(row_start(args, launch, Index<D>{}, static_cast<Row*>(nullptr))...), n_(n) {}

  /// The starts of row `row` (numbered as Extent::row_start numbers rows), a reduction's
  /// contributions going to `contributions`. The next row is one step along y (at the end of a
  /// plane, back along y and one along z); any other row is found by division.
  TESSERA_FORCE_INLINE const auto& at(std::size_t row, Row* contributions) {
    if (row != row_) {
      if (row == row_ + 1) {
        step(1);
      } else {
        const Index<D> to = n_.row_start(row);
        for (std::size_t d = 1; d < D; ++d) {
          if (to.coords[d] != coords_[d]) move(d, static_cast<std::ptrdiff_t>(to.coords[d] - coords_[d]));
          coords_[d] = to.coords[d];
        }
      }
      row_ = row;
    }
    std::apply([&](auto&... s) { (set_contributions(s, contributions), ...); }, starts_);
    return starts_;
  }

 private:
  // One row on along dimension d, carried into d + 1 past the block's end.
  TESSERA_FORCE_INLINE void step(std::size_t d) {
    if (d >= D) return;
    if (++coords_[d] < static_cast<std::int64_t>(n_.sizes[d]) || d + 1 == D) {
      move(d, 1);
      return;
    }
    coords_[d] = 0;
    move(d, 1 - static_cast<std::ptrdiff_t>(n_.sizes[d]));
    step(d + 1);
  }
  TESSERA_FORCE_INLINE void move(std::size_t d, std::ptrdiff_t by) {
    std::apply([&](auto&... s) { (move_one(s, d, by), ...); }, starts_);
  }
  template <typename S>
  static TESSERA_FORCE_INLINE void move_one(S& s, std::size_t d, std::ptrdiff_t by) {
    if constexpr (is_indexed_iterator<S>::value) s.advance(d, by);
  }
  template <typename S>
  static TESSERA_FORCE_INLINE void set_contributions(S& s, Row* contributions) {
    if constexpr (is_contribution<S>::value) s.site = contributions;
  }

  std::tuple<std::remove_cvref_t<decltype(row_start(std::declval<const A&>(), std::declval<const LaunchShape<D>&>(),
                                                    std::declval<const Index<D>&>(), static_cast<Row*>(nullptr)))>...>
      starts_;
  Extent<D> n_;
  std::size_t row_ = 0;
  std::int64_t coords_[D]{};
};

/// The global index of the first tensor argument's first interior site.
template <std::size_t D, typename A0, typename... A>
Index<D> block_origin(const A0& a0, const A&... rest) {
  if constexpr (is_tensor_block_arg<A0>::value)
    return a0.geometry.interior.lo;
  else
    return block_origin<D>(rest...);
}

/// run_block_on_cpu for ExecOptions::edge_width = w > 0: only the sites within w of the global
/// domain's faces, site by site (an edge kernel's scattered writes do not vectorise anyway). A
/// row within w of a face along y or z runs whole; any other row runs only its sites within w
/// of the x faces, so a block costs its perimeter, not its area.
template <std::size_t D, typename F, typename... A>
void run_block_edges_on_cpu(Executor* executor, const ExecOptions& options, const LaunchShape<D>& launch,
                            const Extent<D>& n, std::size_t rows, F& kernel, const A&... args) {
  using Reduced = typename reduced_type<A...>::type;
  constexpr bool reduces = !std::is_void_v<Reduced>;
  std::vector<std::conditional_t<reduces, Reduced, char>> partials(reduces ? rows : 0);
  const auto w = static_cast<std::int64_t>(options.edge_width);
  const Index<D> origin = block_origin<D>(args...);
  const auto nx = static_cast<std::int64_t>(n.sizes[0]);
  const auto gx = static_cast<std::int64_t>(launch.global_size.sizes[0]);
  // Local x ranges [0, low_end) and [high_begin, nx): the row's sites within w of the x faces.
  const std::int64_t low_end = std::clamp<std::int64_t>(w - origin.coords[0], 0, nx);
  const std::int64_t high_begin = std::clamp<std::int64_t>(gx - w - origin.coords[0], low_end, nx);
  auto run_row = [&](std::size_t row) {
    const Index<D> local = n.row_start(row);
    bool whole = false;
    for (std::size_t d = 1; d < D; ++d) {
      const std::int64_t g = origin.coords[d] + local.coords[d];
      whole = whole || g < w || g >= static_cast<std::int64_t>(launch.global_size.sizes[d]) - w;
    }
    Reduced* contributions = nullptr;
    if constexpr (reduces) {
      contributions = cpu_contribution_row<Reduced>(n.sizes[0]);
      clear_contributions(reduce_block_arg(args...), contributions, n.sizes[0]);
    }
    auto starts = std::make_tuple(row_start(args, launch, local, contributions)...);
    auto one = [&](std::int64_t x) {
      std::apply([&](const auto&... s) { kernel(along_x(s, static_cast<std::ptrdiff_t>(x))...); }, starts);
    };
    if (whole) {
      for (std::int64_t x = 0; x < nx; ++x) one(x);
    } else {
      for (std::int64_t x = 0; x < low_end; ++x) one(x);
      for (std::int64_t x = high_begin; x < nx; ++x) one(x);
    }
    if constexpr (reduces)
      partials[row] = fold_contributions(contributions, static_cast<std::size_t>(nx), reduce_block_arg(args...).reducer);
  };
  if (executor != nullptr && rows > 1)
    executor->parallel_for(0, rows, run_row, options.rows_per_task);
  else
    for (std::size_t row = 0; row < rows; ++row) run_row(row);
  if constexpr (reduces) {
    const auto& into = reduce_block_arg(args...);
    *into.slot = fold_contributions(partials.data(), partials.size(), into.reducer);
  }
}

/// Runs `kernel` at every site of a block of `n` sites on the CPU (see the top of this file).
/// With a reduction argument (reduce_into), each row's (or row chunk's) contributions are folded
/// as it ends, and the rows' partials in row order into the argument's slot.
template <std::size_t D, typename F, typename... A>
void run_block_on_cpu(Executor* executor, const ExecOptions& options, const LaunchShape<D>& launch,
                      const Extent<D>& n, F& kernel, const A&... args) {
  using Reduced = typename reduced_type<A...>::type;
  constexpr bool reduces = !std::is_void_v<Reduced>;
  static_assert(count_reduce_block_args<A...>() <= 1, "a kernel takes at most one reduce_into argument");
  const std::size_t nx = n.sizes[0];
  std::size_t rows = 1;
  for (std::size_t d = 1; d < D; ++d) rows *= n.sizes[d];
  if (nx == 0 || rows == 0) {
    if constexpr (reduces) clear_contributions(reduce_block_arg(args...), reduce_block_arg(args...).slot, 1);
    return;
  }
  if (options.edge_width > 0) return run_block_edges_on_cpu<D>(executor, options, launch, n, rows, kernel, args...);

  std::size_t vvl = options.vvl != 0 ? options.vvl : default_vvl<A...>();
  const std::size_t head = std::min(first_tile_head(args...), nx);
  const bool on_tiles = (strips_on_tiles(args, head, vvl) && ...);
  const std::size_t reach = kernel_x_reach<F>(std::max({std::size_t{0}, tiled_reach(args)...}));

  // Few rows (1-D tensors, thin slabs): cut rows into chunks too, about 64 items per worker.
  // Few large items balance badly: the executor's caller runs the first one alone while it
  // decides whether the loop is worth waking helpers for, and with 8 items for 2 workers that
  // alone cost SAXPY a tenth of its time.
  const std::size_t workers = executor ? executor->num_workers() : 1;
  std::size_t chunks_per_row = 1;
  if (rows < 16 * workers && nx >= 2 * 4096)
    chunks_per_row = std::min<std::size_t>((64 * workers + rows - 1) / rows, nx / 4096);
  std::size_t chunk = (nx + chunks_per_row - 1) / chunks_per_row;
  chunk = (chunk + vvl - 1) / vvl * vvl;
  // Staging reads past a tile's ends, into the next worker's chunk when rows are cut. (One
  // tensor passed twice, whose two stages would write back over each other, never gets here:
  // the memory layer refuses the second hold.)
  const bool stage_rows = chunks_per_row == 1;

  constexpr std::size_t natural = default_vvl<A...>();
  // Whole strips of `sites`: the divisions by the run-time VVL at each row's start cost the
  // Jacobi3D sweep (rows of 64 sites) about 5 %; by the natural VVL, a constant, they are shifts.
  const auto strips_in = [vvl](std::size_t sites) { return vvl == natural ? sites / natural : sites / vvl; };

  // A reduction whose order does not matter is folded in registers as the strips run
  // (LaneTotal). Run-time VVLs, and Tiled rows of a kernel that reads along x (whose tile edges
  // run lane by lane across tiles), go through the scratch row.
  constexpr bool lane_foldable = reduces && folds_in_lanes<Reduced, typename reducer_type<A...>::type>();
  using Total =
      std::conditional_t<lane_foldable, LaneTotal<Reduced, typename reducer_type<A...>::type, natural>, NoLaneTotal>;
  const bool fold_in_lanes = lane_foldable && vvl == natural && !(any_tiled_records<A...>() && on_tiles && reach > 0);

  // Sites [x_begin, x_end) of row `row_number`, from the chunk's row starts `walk`, a
  // reduction's contributions going to `row`, or folded into `*total` where it is given.
  using Walk = RowStarts<D, Reduced, A...>;
  auto run_sites = [&](Walk& walk, std::size_t row_number, std::size_t x_begin, std::size_t x_end, Reduced* row,
                       [[maybe_unused]] Total* total) {
    const auto& starts = walk.at(row_number, row);
    auto one = [&](std::size_t x) {
      if constexpr (lane_foldable) {
        if (total != nullptr) {
          typename Total::value_type cell = Total::identity();
          std::apply([&](const auto&... s) { kernel(into_cell(along_x(s, static_cast<std::ptrdiff_t>(x)), &cell)...); },
                     starts);
          total->add(cell);
          return;
        }
      }
      std::apply([&](const auto&... s) { kernel(along_x(s, static_cast<std::ptrdiff_t>(x))...); }, starts);
    };

    std::size_t x = x_begin;
    const std::size_t aligned_from = x < head ? head : head + strips_in(x - head + vvl - 1) * vvl;
    if constexpr (any_tiled_records<A...>()) {
      if (vvl == natural && on_tiles) {
        using Starts = std::remove_cvref_t<decltype(starts)>;
        const auto stage_row = [&](auto fixed_reach) {
          constexpr std::size_t R = decltype(fixed_reach)::value;
          const std::ptrdiff_t pads[] = {static_cast<std::ptrdiff_t>(tiled_reach(args))...};
          run_row_staged<natural, R>(kernel, starts, std::index_sequence_for<A...>{}, pads,
                                     static_cast<std::ptrdiff_t>(nx), static_cast<std::ptrdiff_t>(x_begin),
                                     static_cast<std::ptrdiff_t>(x_end), static_cast<std::ptrdiff_t>(aligned_from));
        };
        if (stage_rows) {
          if constexpr (can_stage_tuple<natural, 1, F, Starts>::value)
            if (reach == 1) return stage_row(std::integral_constant<std::size_t, 1>{});
          if constexpr (can_stage_tuple<natural, 2, F, Starts>::value)
            if (reach == 2) return stage_row(std::integral_constant<std::size_t, 2>{});
        }
        const auto run_row = [&](auto fixed_reach) {
          constexpr std::size_t R = decltype(fixed_reach)::value;
          [[maybe_unused]] NoLaneTotal none;
          if constexpr (lane_foldable && R == 0)
            run_row_with_reach<natural, R>(kernel, one, starts, x_begin, x_end, aligned_from, *total);
          else
            run_row_with_reach<natural, R>(kernel, one, starts, x_begin, x_end, aligned_from, none);
        };
        // A kernel that reads nothing along x (a y sweep) runs whole tiles, and the tiles that the
        // row's ends cut as shorter strips: one by one, the 8 sites of a Tiled<8> row's head and
        // tail cost euler2d's y sweep 12 % (a scalar kernel, not inlined, is 8 lanes' work).
        if (reach == 0) return run_row(std::integral_constant<std::size_t, 0>{});
        // Core lanes for the common stencil widths. Wider reaches keep whole strips: lanes
        // across strips are strided loads, which cost more than the scalar strip if every lane
        // is done that way.
        if (reach == 1 && natural > 4) return run_row(std::integral_constant<std::size_t, 1>{});
        if (reach == 2 && natural > 8) return run_row(std::integral_constant<std::size_t, 2>{});
      }
    }
    // Up to the first tile boundary (and the head of chunks that start mid-tile): one by one.
    for (; x < std::min(aligned_from, x_end); ++x) one(x);
    // One loop per kind of strip, so the common case has a compile-time length and, for Tiled
    // arguments whose tiles it starts on, a tile-relative x of 0.
    auto strips = [&](auto fixed_length, auto tile_starts) {
      constexpr std::size_t N = decltype(fixed_length)::value;
      constexpr bool on_tile_starts = decltype(tile_starts)::value;
      const std::size_t count = strips_in(x_end - x);
      // A lane fold runs strips of the natural length (the Tiled rows left out of it, a stencil
      // along x whose reach has no path of its own, come here too, without one).
      [[maybe_unused]] NoLaneTotal none;
      std::apply(
          [&](const auto&... s) {
            if constexpr (lane_foldable && N > 0)
              if (total != nullptr)
                return run_strips<N, on_tile_starts>(kernel, vvl, static_cast<std::ptrdiff_t>(x), count, *total, s...);
            run_strips<N, on_tile_starts>(kernel, vvl, static_cast<std::ptrdiff_t>(x), count, none, s...);
          },
          starts);
      x += count * vvl;
    };
    if (vvl == natural && on_tiles)
      strips(std::integral_constant<std::size_t, natural>{}, std::true_type{});
    else if (vvl == natural)
      strips(std::integral_constant<std::size_t, natural>{}, std::false_type{});
    else
      strips(std::integral_constant<std::size_t, 0>{}, std::false_type{});
    for (; x < x_end; ++x) one(x);
  };

  // A reduction's short rows run in groups, and each group's contributions are folded once all
  // its rows have run: a row folded right after its strips waits for their last stores (the
  // kernel's slowest results, Jacobi3D's divisions), where the next row's strips could run.
  const std::size_t group = reduces && chunks_per_row == 1 ? std::clamp<std::size_t>(512 / nx, 1, 8) : 1;
  const std::size_t row_stride = (nx + 7) / 8 * 8;
  const std::size_t items = (rows + group - 1) / group * chunks_per_row;
  std::vector<std::conditional_t<reduces, Reduced, char>> partials(
      reduces ? rows * chunks_per_row : 0, partial_identity<std::conditional_t<reduces, Reduced, char>>(args...));
  auto run_item = [&](std::size_t item, Walk& walk) {
    if constexpr (reduces) {
      const auto& into = reduce_block_arg(args...);
      if (group > 1) {
        const std::size_t first = item * group, last = std::min(rows, first + group);
        if constexpr (lane_foldable) {
          if (fold_in_lanes) {
            // The rows' contributions go to registers; the scratch row only gives the
            // contribution argument an address to move along the row with, never written.
            Total total(into.reducer);
            Reduced* unused = cpu_contribution_row<Reduced>(nx);
            for (std::size_t row = first; row < last; ++row) run_sites(walk, row, 0, nx, unused, &total);
            partials[first] = total.total();
            return;
          }
        }
        Reduced* contributions = cpu_contribution_row<Reduced>(row_stride * group);
        clear_contributions(into, contributions, row_stride * (last - first));
        for (std::size_t row = first; row < last; ++row)
          run_sites(walk, row, 0, nx, contributions + (row - first) * row_stride, nullptr);
        if constexpr (folds_in_any_order<std::remove_cvref_t<decltype(into.reducer)>>()) {
          // One fold for the group (the slots between rows hold the identity): a 64-site row's
          // fold is a short chain of dependent steps and the group's runs as long independent
          // ones. The other rows' partials keep the identity.
          partials[first] = fold_contributions(contributions, row_stride * (last - first), into.reducer);
        } else {
          for (std::size_t row = first; row < last; ++row)
            partials[row] = fold_contributions(contributions + (row - first) * row_stride, nx, into.reducer);
        }
        return;
      }
    }
    const std::size_t row = chunks_per_row == 1 ? item : item / chunks_per_row;
    const std::size_t part = chunks_per_row == 1 ? 0 : item % chunks_per_row;
    const std::size_t x_begin = part * chunk;
    const std::size_t x_end = std::min(nx, x_begin + chunk);
    if (x_begin >= x_end) return;  // a reduction's partial stays the identity
    if constexpr (reduces) {
      const auto& into = reduce_block_arg(args...);
      Reduced* contributions = cpu_contribution_row<Reduced>(nx);
      if constexpr (lane_foldable) {
        if (fold_in_lanes) {
          Total total(into.reducer);
          run_sites(walk, row, x_begin, x_end, contributions, &total);
          partials[item] = total.total();
          return;
        }
      }
      clear_contributions(into, contributions + x_begin, x_end - x_begin);
      run_sites(walk, row, x_begin, x_end, contributions, nullptr);
      partials[item] = fold_contributions(contributions + x_begin, x_end - x_begin, into.reducer);
    } else {
      run_sites(walk, row, x_begin, x_end, nullptr, nullptr);
    }
  };
  // Each chunk of items walks its rows from one set of row starts (RowStarts).
  auto run_items = [&](std::size_t lo, std::size_t hi) {
    Walk walk(launch, n, args...);
    for (std::size_t i = lo; i < hi; ++i) run_item(i, walk);
  };
  if (executor != nullptr && items > 1) {
    const std::size_t items_per_task = options.rows_per_task == 0 ? 0 : std::max<std::size_t>(1, options.rows_per_task / group);
    executor->run_loop(
        executor->plan_loop(0, items, items_per_task),
        [](void* context, std::size_t, std::size_t lo, std::size_t hi) {
          (*static_cast<decltype(run_items)*>(context))(lo, hi);
        },
        &run_items);
  } else {
    run_items(0, items);
  }
  if constexpr (reduces) {
    const auto& into = reduce_block_arg(args...);
    *into.slot = fold_contributions(partials.data(), partials.size(), into.reducer);
  }
}

}  // namespace tessera::detail
