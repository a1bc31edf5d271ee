#pragma once
// IndexedIterator<T, D, L>: what a kernel receives for each tensor argument (Ripple §5.2.1).
// It points at one site of one block, dereferences to that site's view in the tensor's layout,
// moves with offset(dim, n), and knows where it is: its global index, the launch block it
// belongs to and its index within that block, and the sizes of each.
//
//   tessera::for_each(ex, [] TESSERA_HOST_DEVICE (auto u, auto out) {
//     double sum = 0;
//     tessera::unrolled_for<decltype(u)::dims>([&](auto d) {
//       sum += *u.offset(d, 1) - *u.offset(d, -1);
//     });
//     *out = sum;
//   }, u, out);

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/core/dims.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/core/unrolled_for.hpp"
#include "tessera/layout/layout_traits.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/tensor/block_geometry.hpp"
#include "tessera/tensor/iteration_space.hpp"

namespace tessera {

/// The launch a kernel's iterators belong to: the global domain and the launch block shape.
template <std::size_t D>
struct LaunchShape {
  Extent<D> global_size{};
  Extent<D> block_size{};
};

/// `A` is how the kernel accesses the tensor: Access::read (a tessera::read_only argument) gives
/// views that only read; write (tessera::write_only) and read_write give views that write too.
template <typename T, std::size_t D, Layout L, Access A = Access::read_write>
class IndexedIterator {
 public:
  using traits = LayoutTraits<T, L>;
  using value_type = T;
  using view_type = std::conditional_t<A == Access::read, typename traits::const_view_type, typename traits::view_type>;
  using layout = L;
  static constexpr std::size_t dims = D;
  static constexpr Access access = A;

  IndexedIterator() = default;
  /// At block-local index `local` of the block whose first row is `data`. Inlined: the CPU loops
  /// make one per argument and row, and as a call it copied all ~200 bytes of the iterator (and
  /// stalled reloading `local`): 17 % of a 64-site Jacobi3D row's samples without a reduction,
  /// 6-15 % with reduce_into.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr IndexedIterator(std::byte* data, const BlockGeometry<D>& geometry,
                                                const LaunchShape<D>& launch, const Index<D>& local) noexcept
      : walk_(geometry), extent_(geometry.interior.extent()), origin_(geometry.interior.lo), launch_(launch),
        local_(local) {
    row_ = walk_.row(data, local);
    x_ = local.coords[0] + walk_.padding.coords[0];
  }

  /// The site's view: a reference for arithmetic T, a Record view for Record types.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr view_type operator*() const noexcept {
    if constexpr (A == Access::read)
      return traits::read_at(row_, x_, walk_.pitch);
    else
      return traits::at(row_, x_, walk_.pitch);
  }
  /// Where the site lives in its layout's terms (Record types): for code that reads tensor
  /// memory itself, like the CPU loop's staging of Tiled rows.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr SiteRef site() const noexcept
    requires(!std::is_arithmetic_v<T>)
  {
    return traits::site(row_, x_, walk_.pitch);
  }
  /// it->update(dt): calls a member of the site's view.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr auto operator->() const noexcept {
    return detail::ArrowProxy<view_type>{**this};
  }

  /// The iterator `n` sites away along dimension `d` (padding included; chain calls to move in
  /// several dimensions: `it.offset(dim_x, 1).offset(dim_y, -1)`).
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr IndexedIterator offset(std::size_t d,
                                                                            std::ptrdiff_t n) const noexcept {
    IndexedIterator r = *this;
    r.local_.coords[d] += n;
    walk_.step(r.row_, r.x_, d, n);
    return r;
  }

  /// offset(d, n) in place: moves this iterator `n` sites along dimension `d`.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr void advance(std::size_t d, std::ptrdiff_t n) noexcept {
    local_.coords[d] += n;
    walk_.step(row_, x_, d, n);
  }

  /// The same site, addressed from its tile in Tiled<V> layouts (x within [0, V)), so moving
  /// along x inside the tile is linear in memory: how the CPU loop lets `omp simd` see
  /// contiguous lanes. Other layouts are returned unchanged.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr IndexedIterator tile_aligned() const noexcept {
    IndexedIterator r = *this;
    if constexpr (is_tiled<L>::value && !std::is_arithmetic_v<T>) {
      constexpr std::ptrdiff_t V = static_cast<std::ptrdiff_t>(L::width);
      constexpr int shift = detail::log2(V);
      const std::ptrdiff_t tile = x_ >> shift;
      r.row_ += tile * V * static_cast<std::ptrdiff_t>(traits::descriptor::site_bytes);
      r.x_ = x_ - tile * V;
    }
    return r;
  }

  /// tile_aligned() for an iterator known to sit on a tile's first site: x becomes the literal 0,
  /// so a fixed-length lane loop from it has addresses the compiler can prove linear.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr IndexedIterator tile_start() const noexcept {
    IndexedIterator r = tile_aligned();
    if constexpr (is_tiled<L>::value && !std::is_arithmetic_v<T>) r.x_ = 0;
    return r;
  }

  /// From an iterator on a tile's first site: site `lane` of the tile `tiles` tiles on. Within
  /// a Tiled<V> row the address is then linear in `tiles` whatever `lane` and any later offset
  /// along x are, which lets the CPU loop run one in-tile lane of many tiles as a vector.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr IndexedIterator tile_lane(std::ptrdiff_t tiles,
                                                                               std::ptrdiff_t lane) const noexcept {
    static_assert(is_tiled<L>::value && !std::is_arithmetic_v<T>, "tile_lane() is for Record types in Tiled<V>");
    constexpr std::ptrdiff_t V = static_cast<std::ptrdiff_t>(L::width);
    IndexedIterator r = *this;
    r.local_.coords[0] += tiles * V + lane;
    r.row_ += tiles * V * static_cast<std::ptrdiff_t>(traits::descriptor::site_bytes);
    r.x_ += lane;
    return r;
  }

  /// Whether the iterator lies inside the block's interior (kernels only run where it does).
  TESSERA_HOST_DEVICE constexpr bool is_valid() const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (local_.coords[d] < 0 || local_.coords[d] >= static_cast<std::int64_t>(extent_.sizes[d])) return false;
    return true;
  }

  /// Index in the whole tensor.
  TESSERA_HOST_DEVICE constexpr std::int64_t global_idx(std::size_t d) const noexcept {
    return origin_.coords[d] + local_.coords[d];
  }
  TESSERA_HOST_DEVICE constexpr Index<D> global_index() const noexcept { return origin_ + local_; }
  TESSERA_HOST_DEVICE constexpr std::size_t global_size(std::size_t d) const noexcept {
    return launch_.global_size.sizes[d];
  }
  /// Index within this tensor block (partition or sub-partition).
  TESSERA_HOST_DEVICE constexpr std::int64_t local_idx(std::size_t d) const noexcept { return local_.coords[d]; }
  TESSERA_HOST_DEVICE constexpr std::size_t local_size(std::size_t d) const noexcept { return extent_.sizes[d]; }
  /// Launch block (a CUDA thread block; a tile on the CPU) and the index within it.
  TESSERA_HOST_DEVICE constexpr std::int64_t block_idx(std::size_t d) const noexcept {
    return local_.coords[d] / static_cast<std::int64_t>(launch_.block_size.sizes[d]);
  }
  TESSERA_HOST_DEVICE constexpr std::size_t block_size(std::size_t d) const noexcept {
    return launch_.block_size.sizes[d];
  }
  TESSERA_HOST_DEVICE constexpr std::int64_t thread_idx(std::size_t d) const noexcept {
    return local_.coords[d] % static_cast<std::int64_t>(launch_.block_size.sizes[d]);
  }
  /// Padding sites on each side of dimension d.
  TESSERA_HOST_DEVICE constexpr std::size_t padding(std::size_t d) const noexcept {
    return static_cast<std::size_t>(walk_.padding.coords[d]);
  }

 private:
  BlockWalk<D> walk_{};
  Extent<D> extent_{};
  Index<D> origin_{};
  LaunchShape<D> launch_{};
  Index<D> local_{};
  std::byte* row_ = nullptr;
  std::ptrdiff_t x_ = 0;
};

}  // namespace tessera
