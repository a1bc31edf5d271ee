#pragma once
// BlockWalk<D>: what an iterator needs to move through one block's rows: the byte distance
// between neighbours along each dimension above x, the row pitch, and where the interior starts.
// Computed once per block launch and copied into every iterator, so moving an iterator is an
// add, never a multiply over the dimensions.

#include <cstddef>

#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/tensor/block_geometry.hpp"

namespace tessera {

template <std::size_t D>
struct BlockWalk {
  /// Bytes from a row to its neighbour along dimension d (entry 0 unused: x moves within a row).
  std::ptrdiff_t row_step[D]{};
  /// Sites a stored row holds.
  std::ptrdiff_t pitch = 0;
  /// The padding, so local index 0 maps to the first interior site.
  Index<D> padding{};

  constexpr BlockWalk() = default;
  TESSERA_HOST_DEVICE constexpr explicit BlockWalk(const BlockGeometry<D>& g) noexcept
      : pitch(static_cast<std::ptrdiff_t>(g.pitch)), padding(g.padding) {
    for (std::size_t d = 1; d < D; ++d) row_step[d] = g.row_stride(d) * static_cast<std::ptrdiff_t>(g.row_bytes);
  }

  /// Moves a site position (row, x) `n` sites along dimension d: x within the row, else whole rows.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr void step(std::byte*& row, std::ptrdiff_t& x, std::size_t d,
                                                               std::ptrdiff_t n) const noexcept {
    if (d == 0)
      x += n;
    else
      row += n * row_step[d];
  }

  /// The row holding block-local index `local`, from the block's first row.
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr std::byte* row(std::byte* data,
                                                                   const Index<D>& local) const noexcept {
    std::ptrdiff_t off = 0;
    for (std::size_t d = 1; d < D; ++d) off += (local.coords[d] + padding.coords[d]) * row_step[d];
    return data + off;
  }
};

namespace detail {
/// What an iterator's operator-> returns: it holds the site's view (a temporary) so that
/// `it->update(dt)` can call a member of it.
template <typename View>
struct ArrowProxy {
  View v;
  TESSERA_HOST_DEVICE constexpr auto* operator->() noexcept { return &v; }
};
}  // namespace detail

}  // namespace tessera
