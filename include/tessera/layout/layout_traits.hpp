#pragma once
// LayoutTraits<T, L>: how a tensor row (a line of sites along x) of element type T is laid out
// in layout L: how many sites a row holds once rounded for alignment, its size in bytes, and the
// view of one site. Tensors, iterators and kernels all go through it, so a layout is defined in
// exactly one place.

#include <cstddef>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/layout/layout.hpp"
#include "tessera/layout/record.hpp"
#include "tessera/layout/site_ref.hpp"
#include "tessera/layout/storage_descriptor.hpp"

namespace tessera {

namespace detail {
TESSERA_HOST_DEVICE constexpr int log2(std::ptrdiff_t v) { return v <= 1 ? 0 : 1 + log2(v / 2); }
TESSERA_HOST_DEVICE constexpr std::size_t gcd(std::size_t a, std::size_t b) { return b == 0 ? a : gcd(b, a % b); }
TESSERA_HOST_DEVICE constexpr std::size_t lcm(std::size_t a, std::size_t b) { return a / gcd(a, b) * b; }
inline constexpr std::size_t row_alignment = 64;  // a cache line, and what AVX-512 loads want
}  // namespace detail

/// Element type T (a Record type in Owned storage, or an arithmetic type) laid out as L.
template <typename T, Layout L>
struct LayoutTraits;

/// Arithmetic elements: every layout is the same plain array.
template <typename T, Layout L>
  requires std::is_arithmetic_v<T>
struct LayoutTraits<T, L> {
  using value_type = T;
  using view_type = T&;
  using const_view_type = const T&;
  using layout = L;
  static constexpr std::size_t site_bytes = sizeof(T);

  /// Sites a row of `n` sites is stored as: rounded up so every row starts 64-byte aligned.
  TESSERA_HOST_DEVICE static constexpr std::size_t row_sites(std::size_t n) noexcept {
    constexpr std::size_t unit = detail::row_alignment / detail::gcd(sizeof(T), detail::row_alignment);
    return detail::round_up(n, unit);
  }
  TESSERA_HOST_DEVICE static constexpr std::size_t row_bytes(std::size_t n) noexcept {
    return row_sites(n) * sizeof(T);
  }
  /// Site x of a row stored as `pitch` sites.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE static constexpr T& at(std::byte* row, std::ptrdiff_t x,
                                                                  std::ptrdiff_t) noexcept {
    return reinterpret_cast<T*>(row)[x];
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE static constexpr const T& read_at(std::byte* row, std::ptrdiff_t x,
                                                                            std::ptrdiff_t) noexcept {
    return reinterpret_cast<const T*>(row)[x];
  }
};

/// Record elements: AoS, SoA over the row, or SoA in tiles of V sites.
template <RecordType T, Layout L>
struct LayoutTraits<T, L> {
  static_assert(std::is_same_v<typename T::storage, Owned>,
                "LayoutTraits<T, L> takes the owned type (Particle<float>, not a view of it)");
  using value_type = T;
  using view_type = with_storage_t<T, View<L>>;
  using const_view_type = with_storage_t<T, ReadView<L>>;
  using layout = L;
  using descriptor = typename T::descriptor;
  static_assert(std::is_same_v<typename view_type::descriptor, descriptor>,
                "with_storage<T, View<L>> must give T's own members");

  /// Bytes a site takes in this layout.
  static constexpr std::size_t site_bytes =
      std::is_same_v<L, Contiguous> ? descriptor::aos_bytes : descriptor::site_bytes;

 private:
  // Rows are a whole number of 64-byte lines, so every row starts aligned; SoA rows also keep
  // each component's run aligned to its scalar (pitch a multiple of 8), and tiled rows hold
  // whole tiles.
  static constexpr std::size_t unit = [] {
    std::size_t u = detail::row_alignment / detail::gcd(site_bytes, detail::row_alignment);
    if constexpr (std::is_same_v<L, Strided>) u = detail::lcm(u, 8);
    if constexpr (is_tiled<L>::value) u = detail::lcm(u, L::width);
    return u;
  }();

  // Strided runs of fewer than four pages are rounded up to a whole number of 4 KiB pages,
  // so no run shares a page with the next: the hardware prefetcher stops at page boundaries,
  // and a run that starts mid-page pays for two ramps. It cost 10% of bandwidth in the particle
  // update with 1000-site rows (bench/results/README.md). Only done where it adds at most 1/8 to
  // a row.
  template <std::size_t... Is>
  static constexpr std::size_t scalar_gcd(std::index_sequence<Is...>) {
    std::size_t g = 0;
    ((g = detail::gcd(g, sizeof(typename descriptor::template scalar<Is>))), ...);
    return g;
  }
  static constexpr std::size_t smallest_scalar = scalar_gcd(std::make_index_sequence<descriptor::members>{});
  static constexpr std::size_t page_sites = detail::lcm(unit, 4096 / detail::gcd(4096, smallest_scalar));
  static constexpr std::size_t stagger_bytes = 2 * detail::row_alignment;
  // Runs of four pages or more are never paged: a page boundary costs a long run little, and
  // runs that all start at the same offset in their pages put every stream of a stencil in the
  // same L1 sets. euler2d's y sweep reads three rows of four components and writes four: with
  // 4096-site rows of doubles (32 KiB runs, paged) the host graph step ran at 0.76-0.86 of the
  // OpenMP solver, whose fields start 17 lines apart; with the runs 128 bytes past whole pages,
  // 0.86-1.00 (4096^2 and 8192^2, 2026-11-27). At 1024 sites (8 KiB runs) paging did no harm.
  static constexpr std::size_t long_run_bytes = 4 * 4096;

  template <std::size_t... Is>
  static constexpr bool tiles_aligned(std::index_sequence<Is...>) {
    if constexpr (is_tiled<L>::value)
      return (((L::width * descriptor::template soa_prefix<Is>) %
                   alignof(typename descriptor::template scalar<Is>) ==
               0) &&
              ...);
    return true;
  }
  static_assert(tiles_aligned(std::make_index_sequence<descriptor::members>{}),
                "Tiled<V>: V is too small to keep every member of a tile aligned; use V >= 8");

 public:
  TESSERA_HOST_DEVICE static constexpr std::size_t row_sites(std::size_t n) noexcept {
    const std::size_t aligned = detail::round_up(n, unit);
    if constexpr (std::is_same_v<L, Strided> && descriptor::components > 1) {
      const std::size_t paged = detail::round_up(n, page_sites);
      if (paged * smallest_scalar < long_run_bytes && 8 * (paged - aligned) <= aligned) return paged;
      // Rows of a page or more not worth paging keep their runs at least two lines past a whole
      // number of pages (runs just short of one get paged). Runs just past one (1026-site rows
      // of 4-byte scalars: 32 bytes past) start near the same offset in their pages, so the
      // runs a stencil reads at once (each component of three rows, and the output's) fall in
      // the same few L1 sets: the FORCE flux on one thread ran at 0.80-0.90 of the SoA loop
      // with 1026-site rows, 0.96-0.97 with the runs 128 bytes past. Whole-page runs have the
      // same conflict (hand-written per-row SoA flux, 1000-site rows: 0.70 of block SoA) but
      // stream faster, which the particle update needs more (0.86 of SoA with runs staggered by
      // two lines, 0.99 with whole pages).
      const std::size_t run_bytes = aligned * smallest_scalar;
      const std::size_t in_page = run_bytes % 4096;
      if (run_bytes >= 4096 && in_page < stagger_bytes)
        return aligned + detail::round_up((stagger_bytes - in_page + smallest_scalar - 1) / smallest_scalar, unit);
    }
    return aligned;
  }
  TESSERA_HOST_DEVICE static constexpr std::size_t row_bytes(std::size_t n) noexcept {
    return row_sites(n) * site_bytes;
  }

  /// Where site x of a row stored as `pitch` sites lives.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE static constexpr SiteRef site(std::byte* row, std::ptrdiff_t x,
                                                                       std::ptrdiff_t pitch) noexcept {
    if constexpr (std::is_same_v<L, Contiguous>) {
      return SiteRef{row + x * static_cast<std::ptrdiff_t>(descriptor::aos_bytes), 0, pitch};
    } else if constexpr (std::is_same_v<L, Strided>) {
      return SiteRef{row, x, pitch};
    } else {
      constexpr std::ptrdiff_t V = static_cast<std::ptrdiff_t>(L::width);
      constexpr std::ptrdiff_t tile_bytes = V * static_cast<std::ptrdiff_t>(descriptor::site_bytes);
      // Floor division and a non-negative lane, so x may be negative relative to a row start
      // that an iterator has moved to a later tile. V is a power of two: a shift and a mask.
      constexpr int shift = detail::log2(V);
      const std::ptrdiff_t tile = x >> shift;
      return SiteRef{row + tile * tile_bytes, x & (V - 1), pitch};
    }
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE static constexpr view_type at(std::byte* row, std::ptrdiff_t x,
                                                                       std::ptrdiff_t pitch) noexcept {
    return view_type(site(row, x, pitch));
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE static constexpr const_view_type read_at(std::byte* row, std::ptrdiff_t x,
                                                                                  std::ptrdiff_t pitch) noexcept {
    return const_view_type(site(row, x, pitch));
  }
};

}  // namespace tessera
