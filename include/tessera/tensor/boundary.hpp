#pragma once
// Boundary loaders: what the OUTER padding of a tensor (padding beyond the faces of the global
// domain) holds. A loader is a small value; Tensor::load_boundary applies it. The per-site rules
// here (where a padding site takes its value from, how that value changes) are
// TESSERA_HOST_DEVICE so device-side loaders can reuse them.
//
// Corners: faces are loaded dimension by dimension, 0 to D-1. The face of dimension d covers
// the padding of dimensions < d (so it also fills edges and corners) and the interior of
// dimensions > d; its sources may lie in the padding of dimensions < d, loaded just before.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/layout/record.hpp"

namespace tessera {

/// Which side of a dimension a face is on.
enum class Side : std::uint8_t { low, high };

/// One face of the global domain: `Face{1, Side::high}` is the top (y = size - 1) face.
struct Face {
  std::size_t dim = 0;
  Side side = Side::low;
};

/// Every padding site of the face holds `value`.
///
///   t.load_boundary(ConstantBoundary{1.5f});
template <typename T>
struct ConstantBoundary {
  T value;
};

/// Every padding site holds the nearest interior site of the face (first-order extrapolation,
/// a zero normal gradient).
///
///   t.load_boundary(ZeroGradient{});
struct ZeroGradient {};

/// The mirror image across the face: padding site -1 - k holds site k. For a Record, component
/// d of Vector member `member` changes sign on faces normal to dimension d (a velocity
/// reflecting off a wall); without a member (or for arithmetic T) the value is copied as is.
///
///   t.load_boundary(Reflective{1});   // member 1 of Particle is the velocity
struct Reflective {
  static constexpr std::size_t no_member = static_cast<std::size_t>(-1);
  std::size_t member = no_member;
};

/// The opposite side of the domain: padding site -1 - k holds site size - 1 - k (wrap around).
///
///   t.load_boundary(Periodic{});
struct Periodic {};

template <typename B>
struct is_boundary_loader : std::false_type {};
template <typename T>
struct is_boundary_loader<ConstantBoundary<T>> : std::true_type {};
template <>
struct is_boundary_loader<ZeroGradient> : std::true_type {};
template <>
struct is_boundary_loader<Reflective> : std::true_type {};
template <>
struct is_boundary_loader<Periodic> : std::true_type {};
template <typename B>
concept BoundaryLoader = is_boundary_loader<B>::value;

namespace boundary {

/// The coordinate along the face's dimension that padding coordinate `c` (outside [0, n))
/// takes its value from.
///
///   boundary::source_coord(ZeroGradient{}, Side::high, 12, 10);   // 9
TESSERA_HOST_DEVICE constexpr std::int64_t source_coord(ZeroGradient, Side side, std::int64_t, std::int64_t n) noexcept {
  return side == Side::low ? 0 : n - 1;
}
TESSERA_HOST_DEVICE constexpr std::int64_t source_coord(Reflective, Side side, std::int64_t c, std::int64_t n) noexcept {
  return side == Side::low ? -1 - c : 2 * n - 1 - c;
}
TESSERA_HOST_DEVICE constexpr std::int64_t source_coord(Periodic, Side side, std::int64_t c, std::int64_t n) noexcept {
  return side == Side::low ? c + n : c - n;
}

namespace detail {
template <typename T, std::size_t... Is>
TESSERA_HOST_DEVICE constexpr void flip_component(T& v, std::size_t member, std::size_t dim, std::index_sequence<Is...>) noexcept {
  using Desc = typename T::descriptor;
  (
      [&] {
        if constexpr (Desc::template is_vector<Is>) {
          if (Is == member && dim < Desc::template count<Is>) {
            auto c = v.template get<Is>();
            c[dim] = -c[dim];
          }
        }
      }(),
      ...);
}
}  // namespace detail

/// The value a padding site on a face normal to `dim` gets from its source site's `v`.
///
///   T padded = boundary::transform(Reflective{1}, source_value, 0);   // velocity.x negated
template <typename T>
TESSERA_HOST_DEVICE constexpr T transform(Reflective r, T v, std::size_t dim) noexcept {
  if constexpr (RecordType<T>) {
    if (r.member != Reflective::no_member)
      detail::flip_component(v, r.member, dim, std::make_index_sequence<T::descriptor::members>{});
  }
  return v;
}
template <typename T, typename B>
TESSERA_HOST_DEVICE constexpr T transform(B, T v, std::size_t) noexcept {
  return v;
}

/// Whether member `member` of Record T is a Vector (what Reflective{member} needs). Faces
/// normal to a dimension the Vector has no component for copy the value unchanged.
template <typename T>
constexpr bool is_vector_member(std::size_t member) noexcept {
  bool ok = false;
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    ((ok = ok || (Is == member && T::descriptor::template is_vector<Is>)), ...);
  }(std::make_index_sequence<T::descriptor::members>{});
  return ok;
}

}  // namespace boundary
}  // namespace tessera
