#pragma once
// BlockGeometry<D>: the shape of one block of a tensor in memory, and BlockView<T, D, L>: a
// block's memory seen through its layout. A block is a box of interior sites with `padding`
// sites on both sides of every dimension, stored as rows along x (dimension 0): row r holds the
// sites with padded coordinates (x, c1, c2, ...) where r = c1 + c2 * e1 + ..., e = padded extent.
// Rows are the unit of coherence (Buffer rows) and of halo copies along y and z.

#include <cstddef>
#include <cstdint>

#include "tessera/core/box.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/layout/layout_traits.hpp"

namespace tessera {

template <std::size_t D>
struct BlockGeometry {
  /// The block's interior in global coordinates (padding excluded).
  Box<D> interior{};
  /// Padding sites on each side of each dimension.
  Index<D> padding{};
  /// Sites a stored row holds (the padded x extent rounded up by the layout).
  std::size_t pitch = 0;
  /// Bytes of one stored row.
  std::size_t row_bytes = 0;

  /// Interior extent plus padding on both sides.
  TESSERA_HOST_DEVICE constexpr Extent<D> padded_extent() const noexcept {
    Extent<D> e = interior.extent();
    for (std::size_t d = 0; d < D; ++d) e.sizes[d] += 2 * static_cast<std::size_t>(padding.coords[d]);
    return e;
  }
  /// Rows stored: the product of the padded extents of dimensions 1..D-1 (1 for D == 1).
  TESSERA_HOST_DEVICE constexpr std::size_t rows() const noexcept {
    const Extent<D> e = padded_extent();
    std::size_t r = 1;
    for (std::size_t d = 1; d < D; ++d) r *= e.sizes[d];
    return r;
  }
  TESSERA_HOST_DEVICE constexpr std::size_t bytes() const noexcept { return rows() * row_bytes; }

  /// How far apart, in rows, neighbours along dimension d are (0 for d == 0: same row).
  TESSERA_HOST_DEVICE constexpr std::ptrdiff_t row_stride(std::size_t d) const noexcept {
    if (d == 0) return 0;
    const Extent<D> e = padded_extent();
    std::ptrdiff_t s = 1;
    for (std::size_t k = 1; k < d; ++k) s *= static_cast<std::ptrdiff_t>(e.sizes[k]);
    return s;
  }
  /// The row holding block-local index `local` (interior origin is 0; padding is negative or
  /// past the interior extent).
  TESSERA_HOST_DEVICE constexpr std::ptrdiff_t row_of(const Index<D>& local) const noexcept {
    std::ptrdiff_t r = 0;
    for (std::size_t d = D; d-- > 1;) r += (local.coords[d] + padding.coords[d]) * row_stride(d);
    return r;
  }
  /// Whether block-local index `local` lies in the interior or its padding.
  TESSERA_HOST_DEVICE constexpr bool contains_padded(const Index<D>& local) const noexcept {
    const Extent<D> n = interior.extent();
    for (std::size_t d = 0; d < D; ++d)
      if (local.coords[d] < -padding.coords[d] ||
          local.coords[d] >= static_cast<std::int64_t>(n.sizes[d]) + padding.coords[d])
        return false;
    return true;
  }
};

/// Where the rows of a block of T laid out as L lie: computes the geometry for a given interior
/// and padding.
///
///   BlockGeometry<2> g = make_block_geometry<float, Strided>(Box<2>{{0, 0}, {64, 32}}, Index<2>{1, 1});
template <typename T, Layout L, std::size_t D>
constexpr BlockGeometry<D> make_block_geometry(const Box<D>& interior, const Index<D>& padding) noexcept {
  BlockGeometry<D> g;
  g.interior = interior;
  g.padding = padding;
  const std::size_t nx = g.padded_extent().sizes[0];
  g.pitch = LayoutTraits<T, L>::row_sites(nx);
  g.row_bytes = LayoutTraits<T, L>::row_bytes(nx);
  return g;
}

/// A block's memory on one device, seen as elements of T in layout L. Cheap to copy; what
/// iterators and kernels carry.
///
///   BlockView<float, 2, Contiguous> v{data, geometry};
///   v.at(Index<2>{-1, 0}) = 0.0f;   // the left padding of the first row
template <typename T, std::size_t D, Layout L>
struct BlockView {
  using traits = LayoutTraits<T, L>;
  using view_type = typename traits::view_type;

  std::byte* data = nullptr;
  BlockGeometry<D> geometry{};

  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr std::byte* row(std::ptrdiff_t r) const noexcept {
    return data + r * static_cast<std::ptrdiff_t>(geometry.row_bytes);
  }
  /// The site at block-local index `local` (padding allowed).
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr view_type at(const Index<D>& local) const noexcept {
    return traits::at(row(geometry.row_of(local)), local.coords[0] + geometry.padding.coords[0],
                      static_cast<std::ptrdiff_t>(geometry.pitch));
  }
};

}  // namespace tessera
