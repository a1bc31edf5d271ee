#pragma once
// Staging one tile of a Tiled<V> record row for the CPU loop (cpu_block.hpp, run_row_staged).
//
// In Tiled<V> an x-neighbour of a lane at a tile's edge lies in the next tile, at an address
// that is not linear in the lane, so a lane loop that reads x +- 1 does not vectorise. A stage is
// the tile's sites with R more on either side, copied into a small Strided row (each component's
// run of V + 2R scalars in a row), where every lane's neighbours are linear in the lane; the
// kernel gets a StagedTileIterator that reads and writes the stage for the sites it holds and
// tensor memory for any other, and what the kernel changed in the stage is copied back after the
// tile. It is how one writes a stencil over AoSoA by hand (baseline::flux_aosoa).

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/layout/layout.hpp"
#include "tessera/layout/layout_traits.hpp"
#include "tessera/layout/record.hpp"
#include "tessera/layout/site_ref.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/tensor/indexed_iterator.hpp"
#include "tessera/tensor/iteration_space.hpp"

namespace tessera::detail {

/// Sites x in [-R, V + R) of one tile (x relative to its first site) of a Tiled<V> row of T,
/// as a Strided row of `pitch` sites: site x at index x + R.
template <typename T, std::size_t V, std::size_t R>
class StagedTile {
  using descriptor = typename T::descriptor;

 public:
  static constexpr std::ptrdiff_t pitch = static_cast<std::ptrdiff_t>(round_up(V + 2 * R, 8));

  std::byte* data() noexcept { return bytes_; }

  /// Copies sites [lo, hi) (tile-relative, within [-R, V + R)) of the tile whose first site's
  /// memory starts at `tile`. Sites outside [lo, hi) keep whatever the stage held.
  TESSERA_FORCE_INLINE void load(std::byte* tile, std::ptrdiff_t lo, std::ptrdiff_t hi) noexcept {
    if (lo == -static_cast<std::ptrdiff_t>(R) && hi == static_cast<std::ptrdiff_t>(V + R))
      for_each_run([&](std::byte* stage_run, std::byte* tile_run, auto scalar) {
        // Whole tile and halo: sizes known at compile time, so these become a few vector moves
        // (with the scalar size a run-time value they were calls to memmove, which cost the
        // Tiled x sweep more than its arithmetic).
        for_pieces<true, decltype(scalar)::value>(stage_run, tile_run, lo, hi,
                                                  [](std::byte* s, std::byte* t, auto n) { std::memcpy(s, t, n); });
      }, tile);
    else
      for_each_run([&](std::byte* stage_run, std::byte* tile_run, auto scalar) {
        for_pieces<false, decltype(scalar)::value>(stage_run, tile_run, lo, hi,
                                                   [](std::byte* s, std::byte* t, auto n) { std::memcpy(s, t, n); });
      }, tile);
  }

  /// Copies back to the tile (and its neighbours) every piece of sites [lo, hi) whose bytes the
  /// kernel changed; nothing is written where nothing changed, so a tensor the kernel only reads
  /// is only read.
  TESSERA_FORCE_INLINE void store_changed(std::byte* tile, std::ptrdiff_t lo, std::ptrdiff_t hi) noexcept {
    auto back = [](std::byte* s, std::byte* t, auto n) {
      if (differ(s, t, n)) std::memcpy(t, s, n);
    };
    if (lo == -static_cast<std::ptrdiff_t>(R) && hi == static_cast<std::ptrdiff_t>(V + R))
      for_each_run([&](std::byte* stage_run, std::byte* tile_run, auto scalar) {
        for_pieces<true, decltype(scalar)::value>(stage_run, tile_run, lo, hi, back);
      }, tile);
    else
      for_each_run([&](std::byte* stage_run, std::byte* tile_run, auto scalar) {
        for_pieces<false, decltype(scalar)::value>(stage_run, tile_run, lo, hi, back);
      }, tile);
  }

 private:
  static constexpr std::ptrdiff_t tile_bytes = static_cast<std::ptrdiff_t>(V * descriptor::site_bytes);

  static bool differ(const std::byte* a, const std::byte* b, std::size_t n) noexcept {
    unsigned char any = 0;
    for (std::size_t i = 0; i < n; ++i)
      any |= static_cast<unsigned char>(static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]));
    return any != 0;
  }

  /// f(stage run, tile run, scalar size) for each scalar component: in Tiled<V> component c of
  /// member I is V scalars at V * soa_prefix<I> + c * V * sizeof(scalar); in the stage, `pitch`
  /// scalars at pitch * soa_prefix<I> + c * pitch * sizeof(scalar).
  template <typename F>
  TESSERA_FORCE_INLINE void for_each_run(F&& f, std::byte* tile) noexcept {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (run_member<I>(f, tile), ...);
    }(std::make_index_sequence<descriptor::members>{});
  }
  template <std::size_t I, typename F>
  TESSERA_FORCE_INLINE void run_member(F& f, std::byte* tile) noexcept {
    constexpr std::size_t s = sizeof(typename descriptor::template scalar<I>);
    constexpr std::ptrdiff_t prefix = static_cast<std::ptrdiff_t>(descriptor::template soa_prefix<I>);
    for (std::size_t c = 0; c < descriptor::template count<I>; ++c)
      f(bytes_ + pitch * prefix + static_cast<std::ptrdiff_t>(c) * pitch * static_cast<std::ptrdiff_t>(s),
        tile + static_cast<std::ptrdiff_t>(V) * prefix + static_cast<std::ptrdiff_t>(c * V * s),
        std::integral_constant<std::size_t, s>{});
  }

  /// op(stage bytes, tile bytes, length) for the sites of [lo, hi) in the tile before this one,
  /// this one and the next, which lie apart in memory.
  template <bool Whole, std::size_t S, typename Op>
  TESSERA_FORCE_INLINE static void for_pieces(std::byte* stage_run, std::byte* tile_run, std::ptrdiff_t lo,
                                              std::ptrdiff_t hi, Op&& op) noexcept {
    constexpr std::ptrdiff_t v = static_cast<std::ptrdiff_t>(V), r = static_cast<std::ptrdiff_t>(R);
    constexpr auto ss = static_cast<std::ptrdiff_t>(S);
    auto piece = [&](std::ptrdiff_t from, std::ptrdiff_t to, std::ptrdiff_t tile) {
      if (from < to)
        op(stage_run + (from + r) * ss, tile_run + tile * tile_bytes + (from - tile * v) * ss,
           static_cast<std::size_t>((to - from) * ss));
    };
    // The whole tile and its halo: three pieces of sizes fixed at compile time.
    auto fixed_piece = [&]<std::ptrdiff_t From, std::ptrdiff_t To, std::ptrdiff_t Tile>() {
      op(stage_run + (From + r) * ss, tile_run + Tile * tile_bytes + (From - Tile * v) * ss,
         std::integral_constant<std::size_t, static_cast<std::size_t>((To - From) * ss)>{});
    };
    if constexpr (Whole) {
      fixed_piece.template operator()<-r, 0, -1>();
      fixed_piece.template operator()<0, v, 0>();
      fixed_piece.template operator()<v, v + r, 1>();
    } else {
      piece(lo, hi < 0 ? hi : 0, -1);
      piece(lo > 0 ? lo : 0, hi < v ? hi : v, 0);
      piece(lo > v ? lo : v, hi, 1);
    }
  }

  alignas(64) std::byte bytes_[static_cast<std::size_t>(pitch) * descriptor::site_bytes];
};

/// What a kernel gets for a staged Tiled<V> record argument: IndexedIterator's interface, with
/// the sites of the tile's stage read and written there. Which memory a site is in depends only
/// on where the iterator points (along x within [-R, V + R) of the tile and not moved along any
/// other dimension: the stage), so every way of reaching a site reaches the same copy of it.
/// Its view is a Strided view in both cases (a Tiled site is the Strided site `lane` of a row
/// of pitch V that starts at its tile), so the kernel sees one type.
template <typename T, std::size_t D, std::size_t V, std::size_t R, Access A = Access::read_write>
class StagedTileIterator {
  using real_iterator = IndexedIterator<T, D, Tiled<V>, A>;
  using stage_type = StagedTile<T, V, R>;

 public:
  using value_type = T;
  using view_type = with_storage_t<T, std::conditional_t<A == Access::read, ReadView<Strided>, View<Strided>>>;
  using layout = Tiled<V>;
  static constexpr std::size_t dims = D;
  static constexpr Access access = A;

  /// At the first site of the tile `tile` tiles on from `row_first` (an iterator on the first
  /// site of a tile of the row), which `stage` holds. Small on purpose: one is made per tile,
  /// and the tensor-side iterator is only rebuilt where a site is not in the stage.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE StagedTileIterator(const real_iterator& row_first, std::ptrdiff_t tile,
                                          std::byte* stage) noexcept
      : row_first_(&row_first), tile_(tile), stage_(stage) {}

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE view_type operator*() const noexcept {
    if (in_stage()) return view_type(SiteRef{stage_, lane_ + static_cast<std::ptrdiff_t>(R), stage_type::pitch});
    const SiteRef s = real().site();
    return view_type(SiteRef{s.base, s.index, static_cast<std::ptrdiff_t>(V)});
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE auto operator->() const noexcept { return ArrowProxy<view_type>{**this}; }

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE StagedTileIterator offset(std::size_t d, std::ptrdiff_t n) const noexcept {
    StagedTileIterator r = *this;
    if (d == 0)
      r.lane_ += n;
    else
      r.away_[d] += n;
    return r;
  }

  TESSERA_HOST_DEVICE bool is_valid() const noexcept { return real().is_valid(); }
  TESSERA_HOST_DEVICE std::int64_t global_idx(std::size_t d) const noexcept { return real().global_idx(d); }
  TESSERA_HOST_DEVICE Index<D> global_index() const noexcept { return real().global_index(); }
  TESSERA_HOST_DEVICE std::size_t global_size(std::size_t d) const noexcept { return real().global_size(d); }
  TESSERA_HOST_DEVICE std::int64_t local_idx(std::size_t d) const noexcept { return real().local_idx(d); }
  TESSERA_HOST_DEVICE std::size_t local_size(std::size_t d) const noexcept { return real().local_size(d); }
  TESSERA_HOST_DEVICE std::int64_t block_idx(std::size_t d) const noexcept { return real().block_idx(d); }
  TESSERA_HOST_DEVICE std::size_t block_size(std::size_t d) const noexcept { return real().block_size(d); }
  TESSERA_HOST_DEVICE std::int64_t thread_idx(std::size_t d) const noexcept { return real().thread_idx(d); }
  TESSERA_HOST_DEVICE std::size_t padding(std::size_t d) const noexcept { return real().padding(d); }

 private:
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE bool in_stage() const noexcept {
    bool home = lane_ >= -static_cast<std::ptrdiff_t>(R) && lane_ < static_cast<std::ptrdiff_t>(V + R);
    for (std::size_t d = 1; d < D; ++d) home = home && away_[d] == 0;
    return home;
  }
  /// The same site in the tensor. tile_start() makes x a literal 0 before the lane is added, so
  /// that the compiler sees the site's tile and lane as linear in the lane.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE real_iterator real() const noexcept {
    real_iterator r = row_first_->tile_lane(tile_, 0).tile_start().offset(0, lane_);
    for (std::size_t d = 1; d < D; ++d) r = r.offset(d, away_[d]);
    return r;
  }

  const real_iterator* row_first_;
  std::ptrdiff_t tile_;
  std::byte* stage_;
  std::ptrdiff_t lane_ = 0;
  std::ptrdiff_t away_[D]{};
};

/// Moves a staged iterator `n` sites along x (block_args.hpp's along_x for the unstaged ones).
template <typename T, std::size_t D, std::size_t V, std::size_t R, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE StagedTileIterator<T, D, V, R, A> along_x(const StagedTileIterator<T, D, V, R, A>& it,
                                                               std::ptrdiff_t n) noexcept {
  return it.offset(0, n);
}

}  // namespace tessera::detail
