#pragma once
// Layout tags and storage kinds.
//
// A layout says where the members of a user type live for each site of a tensor row (a line of
// sites along x, the fastest dimension):
//   Contiguous  every site's members together (AoS), as a struct in an array;
//   Strided     each scalar component in its own array across the row (SoA, Ripple §4.2);
//   Tiled<V>    SoA inside chunks of V sites (AoSoA, targetDP's virtual vector length), so a
//               V-wide SIMD loop reads each component with one aligned load.
// A storage kind says what a Record holds: `Owned` (the values themselves), `View<L>` (where
// the values live in tensor memory laid out as L) or `ReadView<L>` (the same, read only).

#include <cstddef>
#include <type_traits>

namespace tessera {

struct Contiguous {
  static constexpr const char* name = "contiguous";
};
struct Strided {
  static constexpr const char* name = "strided";
};
/// SoA in chunks of V sites. V is a power of two; 8 or 16 suits AVX2/AVX-512 floats.
template <std::size_t V>
struct Tiled {
  static_assert(V > 0 && (V & (V - 1)) == 0, "tessera::Tiled<V> needs V a power of two");
  static constexpr std::size_t width = V;
  static constexpr const char* name = "tiled";
};

template <typename L>
struct is_layout : std::false_type {};
template <>
struct is_layout<Contiguous> : std::true_type {};
template <>
struct is_layout<Strided> : std::true_type {};
template <std::size_t V>
struct is_layout<Tiled<V>> : std::true_type {};
template <typename L>
concept Layout = is_layout<L>::value;

template <typename L>
struct is_tiled : std::false_type {};
template <std::size_t V>
struct is_tiled<Tiled<V>> : std::true_type {};

/// A Record that holds its values (the default storage of every user type).
struct Owned {};
/// A Record that refers to one site of tensor memory laid out as L.
template <Layout L>
struct View {
  using layout = L;
};

/// A View<L> that only reads: its members are const references, so a kernel that writes a
/// tensor it was given as tessera::read_only does not compile.
template <Layout L>
struct ReadView {
  using layout = L;
};

template <typename S>
struct is_view : std::false_type {};
template <typename L>
struct is_view<View<L>> : std::true_type {};
template <typename L>
struct is_view<ReadView<L>> : std::true_type {};
template <typename S>
struct is_read_view : std::false_type {};
template <typename L>
struct is_read_view<ReadView<L>> : std::true_type {};

}  // namespace tessera
