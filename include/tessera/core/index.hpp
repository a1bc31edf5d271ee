#pragma once
// Index<D> is a point on a D-dimensional grid (signed, so offsets and halos can go negative);
// Extent<D> is the size of a grid (unsigned).
//
// Layout convention, used by linear()/delinear(), for_each_index() and every loop tessera runs:
// dimension 0 (x) varies FASTEST, as threadIdx.x is innermost in CUDA and x in Ripple, so
// neighbouring x are neighbouring in memory and neighbouring threads touch neighbouring words.

#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "tessera/core/dims.hpp"
#include "tessera/core/host_device.hpp"

namespace tessera {

/// A point on a D-dimensional grid; default-constructs to the origin.
///
///   Index i{3, -1};  i[dim_x] += 1;  // Index<2> (4, -1)
template <std::size_t D>
struct Index {
  static_assert(D >= 1, "tessera::Index needs at least one dimension");
  static constexpr std::size_t rank = D;

  std::int64_t coords[D]{};

  constexpr Index() = default;

  // explicit when D == 1, so a bare integer never turns into a point by accident.
  template <std::integral... Ts>
    requires(sizeof...(Ts) == D)
  TESSERA_HOST_DEVICE constexpr explicit(D == 1) Index(Ts... values) noexcept
      : coords{static_cast<std::int64_t>(values)...} {}

  TESSERA_HOST_DEVICE static constexpr Index filled(std::int64_t value) noexcept {
    Index r;
    for (std::size_t d = 0; d < D; ++d) r.coords[d] = value;
    return r;
  }

  TESSERA_HOST_DEVICE constexpr std::int64_t& operator[](std::size_t d) noexcept {
    assert(d < D);
    return coords[d];
  }
  TESSERA_HOST_DEVICE constexpr const std::int64_t& operator[](std::size_t d) const noexcept {
    assert(d < D);
    return coords[d];
  }
  template <std::size_t N>
  TESSERA_HOST_DEVICE constexpr std::int64_t& operator[](Dimension<N>) noexcept {
    static_assert(N < D, "dimension tag out of range for this Index");
    return coords[N];
  }
  template <std::size_t N>
  TESSERA_HOST_DEVICE constexpr const std::int64_t& operator[](Dimension<N>) const noexcept {
    static_assert(N < D, "dimension tag out of range for this Index");
    return coords[N];
  }

  TESSERA_HOST_DEVICE friend constexpr Index operator+(const Index& a, const Index& b) noexcept {
    Index r;
    for (std::size_t d = 0; d < D; ++d) r.coords[d] = a.coords[d] + b.coords[d];
    return r;
  }
  TESSERA_HOST_DEVICE friend constexpr Index operator-(const Index& a, const Index& b) noexcept {
    Index r;
    for (std::size_t d = 0; d < D; ++d) r.coords[d] = a.coords[d] - b.coords[d];
    return r;
  }
  TESSERA_HOST_DEVICE friend constexpr Index operator-(const Index& a) noexcept {
    return Index{} - a;
  }
  TESSERA_HOST_DEVICE friend constexpr bool operator==(const Index& a, const Index& b) noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (a.coords[d] != b.coords[d]) return false;
    return true;
  }
};

template <std::integral... Ts>
Index(Ts...) -> Index<sizeof...(Ts)>;

/// The size of a D-dimensional grid, and the map between its points and offsets in a
/// dense buffer (x fastest).
///
///   Extent e{4, 3};  buffer[e.linear(Index{1, 2})];  // offset 1 + 2 * 4 = 9
template <std::size_t D>
struct Extent {
  static_assert(D >= 1, "tessera::Extent needs at least one dimension");
  static constexpr std::size_t rank = D;

  std::size_t sizes[D]{};

  constexpr Extent() = default;

  // Negative values wrap to huge sizes; pass sizes, not offsets.
  template <std::integral... Ts>
    requires(sizeof...(Ts) == D)
  TESSERA_HOST_DEVICE constexpr explicit(D == 1) Extent(Ts... values) noexcept
      : sizes{static_cast<std::size_t>(values)...} {}

  TESSERA_HOST_DEVICE static constexpr Extent filled(std::size_t value) noexcept {
    Extent r;
    for (std::size_t d = 0; d < D; ++d) r.sizes[d] = value;
    return r;
  }

  TESSERA_HOST_DEVICE constexpr std::size_t& operator[](std::size_t d) noexcept {
    assert(d < D);
    return sizes[d];
  }
  TESSERA_HOST_DEVICE constexpr const std::size_t& operator[](std::size_t d) const noexcept {
    assert(d < D);
    return sizes[d];
  }
  template <std::size_t N>
  TESSERA_HOST_DEVICE constexpr std::size_t& operator[](Dimension<N>) noexcept {
    static_assert(N < D, "dimension tag out of range for this Extent");
    return sizes[N];
  }
  template <std::size_t N>
  TESSERA_HOST_DEVICE constexpr const std::size_t& operator[](Dimension<N>) const noexcept {
    static_assert(N < D, "dimension tag out of range for this Extent");
    return sizes[N];
  }

  /// Number of points; 0 if any size is 0.
  TESSERA_HOST_DEVICE constexpr std::size_t volume() const noexcept {
    std::size_t v = 1;
    for (std::size_t d = 0; d < D; ++d) v *= sizes[d];
    return v;
  }

  /// True when 0 <= i[d] < size[d] in every dimension.
  TESSERA_HOST_DEVICE constexpr bool contains(const Index<D>& i) const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (i.coords[d] < 0 || static_cast<std::size_t>(i.coords[d]) >= sizes[d]) return false;
    return true;
  }

  /// Offset of `i` in a dense buffer of this extent, x fastest. Precondition: contains(i).
  TESSERA_HOST_DEVICE constexpr std::size_t linear(const Index<D>& i) const noexcept {
    std::size_t lin = 0;
    for (std::size_t d = D; d-- > 0;) lin = lin * sizes[d] + static_cast<std::size_t>(i.coords[d]);
    return lin;
  }

  /// Inverse of linear(). Needs every size but the last non-zero. The last coordinate is not
  /// wrapped, so linear(delinear(n)) == n even for n >= volume() (it then lies past the end).
  TESSERA_HOST_DEVICE constexpr Index<D> delinear(std::size_t lin) const noexcept {
    Index<D> i;
    for (std::size_t d = 0; d + 1 < D; ++d) {
      i.coords[d] = static_cast<std::int64_t>(lin % sizes[d]);
      lin /= sizes[d];
    }
    i.coords[D - 1] = static_cast<std::int64_t>(lin);
    return i;
  }

  /// The first site (x = 0) of row `row`, rows numbered like the coordinates above x (y
  /// fastest): linear(row_start(r)) == r * sizes[0] for r < volume() / sizes[0]. The CPU loops
  /// hand rows to their workers by number.
  TESSERA_HOST_DEVICE constexpr Index<D> row_start(std::size_t row) const noexcept {
    Index<D> i{};
    for (std::size_t d = 1; d < D; ++d) {
      i.coords[d] = static_cast<std::int64_t>(row % sizes[d]);
      row /= sizes[d];
    }
    return i;
  }

  // Subtraction wraps like any unsigned arithmetic if b > a in some dimension.
  TESSERA_HOST_DEVICE friend constexpr Extent operator+(const Extent& a, const Extent& b) noexcept {
    Extent r;
    for (std::size_t d = 0; d < D; ++d) r.sizes[d] = a.sizes[d] + b.sizes[d];
    return r;
  }
  TESSERA_HOST_DEVICE friend constexpr Extent operator-(const Extent& a, const Extent& b) noexcept {
    Extent r;
    for (std::size_t d = 0; d < D; ++d) r.sizes[d] = a.sizes[d] - b.sizes[d];
    return r;
  }
  TESSERA_HOST_DEVICE friend constexpr bool operator==(const Extent& a, const Extent& b) noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (a.sizes[d] != b.sizes[d]) return false;
    return true;
  }
};

template <std::integral... Ts>
Extent(Ts...) -> Extent<sizeof...(Ts)>;

}  // namespace tessera
