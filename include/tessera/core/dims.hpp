#pragma once
// Dimension tags: name an axis by type, so `idx[dim_y]` is checked against the rank at compile
// time while still converting to the plain position (x = 0, y = 1, z = 2) where a number is needed.

#include <cstddef>
#include <type_traits>

#include "tessera/core/host_device.hpp"

namespace tessera {

/// Tag for axis N (0 is x, the fastest-varying axis).
///
///   std::size_t rows = extent[dim_y];   // same as extent[1], but rank-checked
template <std::size_t N>
struct Dimension : std::integral_constant<std::size_t, N> {
  // Redeclared because std::integral_constant's conversion is host-only under nvcc.
  TESSERA_HOST_DEVICE constexpr operator std::size_t() const noexcept { return N; }
};

inline constexpr Dimension<0> dim_x{};
inline constexpr Dimension<1> dim_y{};
inline constexpr Dimension<2> dim_z{};

/// Axis tag for any rank, for code that goes past z: `idx[dim<3>]`.
template <std::size_t N>
inline constexpr Dimension<N> dim{};

}  // namespace tessera
