#pragma once
// BlockIterator: the light iterator (Ripple §5.2.2). It walks one block of memory — a tile
// staged in shared memory, a scratch buffer — and knows only its index within that block, not
// where the block sits in a tensor. Over a dynamic shape it carries the row steps; over a
// StaticExtent<N...> they are compile-time constants, so it is a pointer and two indices.
//
//   BlockIterator<float, 2, Contiguous> it(tile, geometry, Index<2>{tx, ty});
//   float lap = *it.offset(dim_x, 1) + *it.offset(dim_x, -1) - 2 * *it;

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/layout/layout_traits.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/tensor/block_geometry.hpp"
#include "tessera/tensor/iteration_space.hpp"

namespace tessera {

/// A block shape fixed at compile time (no padding): `StaticExtent<16, 16>`.
template <std::size_t... Ns>
struct StaticExtent {
  static constexpr std::size_t rank = sizeof...(Ns);
  static constexpr std::size_t volume = (Ns * ...);
  // A function, not an array: a static array member is not addressable in device code.
  TESSERA_HOST_DEVICE static constexpr std::size_t size(std::size_t d) noexcept {
    std::size_t r = 0, i = 0;
    ((r = (i++ == d ? Ns : r)), ...);
    return r;
  }
};

namespace detail {
template <typename T>
struct is_static_extent : std::false_type {};
template <std::size_t... Ns>
struct is_static_extent<StaticExtent<Ns...>> : std::true_type {};
}  // namespace detail

/// Over a block whose geometry is known at run time (what `in_shared` kernels receive). `A` is
/// how the kernel accesses it: Access::read (`in_shared(read_only(t))`) gives views that only
/// read.
template <typename T, std::size_t D, Layout L, typename Shape = Extent<D>, Access A = Access::read_write>
class BlockIterator {
 public:
  using traits = LayoutTraits<T, L>;
  using view_type = std::conditional_t<A == Access::read, typename traits::const_view_type, typename traits::view_type>;
  using value_type = T;
  using layout = L;
  static constexpr std::size_t dims = D;
  static constexpr Access access = A;

  BlockIterator() = default;
  TESSERA_HOST_DEVICE constexpr BlockIterator(std::byte* data, const BlockGeometry<D>& geometry,
                                              const Index<D>& local) noexcept
      : walk_(geometry), extent_(geometry.interior.extent()), local_(local) {
    row_ = walk_.row(data, local);
    x_ = local.coords[0] + walk_.padding.coords[0];
  }

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr view_type operator*() const noexcept {
    if constexpr (A == Access::read)
      return traits::read_at(row_, x_, walk_.pitch);
    else
      return traits::at(row_, x_, walk_.pitch);
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr auto operator->() const noexcept {
    return detail::ArrowProxy<view_type>{**this};
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr BlockIterator offset(std::size_t d,
                                                                          std::ptrdiff_t n) const noexcept {
    BlockIterator r = *this;
    r.local_.coords[d] += n;
    walk_.step(r.row_, r.x_, d, n);
    return r;
  }
  /// Index within the block (interior origin 0).
  TESSERA_HOST_DEVICE constexpr std::int64_t local_idx(std::size_t d) const noexcept { return local_.coords[d]; }
  TESSERA_HOST_DEVICE constexpr std::size_t local_size(std::size_t d) const noexcept { return extent_.sizes[d]; }
  TESSERA_HOST_DEVICE constexpr bool is_valid() const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (local_.coords[d] < 0 || local_.coords[d] >= static_cast<std::int64_t>(extent_.sizes[d])) return false;
    return true;
  }

 private:
  BlockWalk<D> walk_{};
  Extent<D> extent_{};
  Index<D> local_{};
  std::byte* row_ = nullptr;
  std::ptrdiff_t x_ = 0;
};

/// Over a StaticExtent<N...> block without padding: every step is a compile-time constant.
template <typename T, std::size_t D, Layout L, std::size_t... Ns>
class BlockIterator<T, D, L, StaticExtent<Ns...>> {
  static_assert(sizeof...(Ns) == D, "BlockIterator<T, D, L, StaticExtent<N...>> needs D sizes");
  using Shape = StaticExtent<Ns...>;

 public:
  using traits = LayoutTraits<T, L>;
  using view_type = typename traits::view_type;
  using value_type = T;
  using layout = L;
  static constexpr std::size_t dims = D;
  /// Bytes the block takes: size scratch memory with this.
  static constexpr std::size_t bytes = [] {
    std::size_t rows = 1;
    for (std::size_t d = 1; d < D; ++d) rows *= Shape::size(d);
    return rows * traits::row_bytes(Shape::size(0));
  }();

  BlockIterator() = default;
  TESSERA_HOST_DEVICE constexpr BlockIterator(std::byte* data, const Index<D>& local) noexcept
      : data_(data), local_(local) {}

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr view_type operator*() const noexcept {
    std::ptrdiff_t off = 0;
    for (std::size_t d = 1; d < D; ++d) off += local_.coords[d] * row_step(d);
    return traits::at(data_ + off, local_.coords[0], pitch);
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr auto operator->() const noexcept {
    return detail::ArrowProxy<view_type>{**this};
  }
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr BlockIterator offset(std::size_t d,
                                                                          std::ptrdiff_t n) const noexcept {
    BlockIterator r = *this;
    r.local_.coords[d] += n;
    return r;
  }
  TESSERA_HOST_DEVICE constexpr std::int64_t local_idx(std::size_t d) const noexcept { return local_.coords[d]; }
  TESSERA_HOST_DEVICE static constexpr std::size_t local_size(std::size_t d) noexcept { return Shape::size(d); }
  TESSERA_HOST_DEVICE constexpr bool is_valid() const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (local_.coords[d] < 0 || local_.coords[d] >= static_cast<std::int64_t>(Shape::size(d))) return false;
    return true;
  }

 private:
  static constexpr std::ptrdiff_t pitch = static_cast<std::ptrdiff_t>(traits::row_sites(Shape::size(0)));
  TESSERA_HOST_DEVICE static constexpr std::ptrdiff_t row_step(std::size_t d) noexcept {
    std::ptrdiff_t s = static_cast<std::ptrdiff_t>(traits::row_bytes(Shape::size(0)));
    for (std::size_t k = 1; k < d; ++k) s *= static_cast<std::ptrdiff_t>(Shape::size(k));
    return s;
  }
  std::byte* data_ = nullptr;
  Index<D> local_{};
};

}  // namespace tessera
