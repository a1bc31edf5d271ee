#pragma once
// StorageDescriptor<Members...>: the compile-time description of what a Record stores, a list
// of scalars and Vector<T, N>s, with the byte offsets each layout places them at.

#include <cstddef>
#include <type_traits>

#include "tessera/core/host_device.hpp"

namespace tessera {

/// A Record member of N scalars of type T, stored like any other N scalars (its components are
/// strided apart in SoA layouts). Read it through get<I>() as a VecRef<T, N>.
template <typename T, std::size_t N>
struct Vector {
  static_assert(std::is_arithmetic_v<T>, "tessera::Vector<T, N> holds arithmetic T");
  static_assert(N >= 1, "tessera::Vector<T, N> needs N >= 1");
};

namespace detail {
template <typename M>
struct MemberTraits {
  static_assert(std::is_arithmetic_v<M>,
                "a Record member is an arithmetic type (float, int, bool, ...) or tessera::Vector<T, N>");
  using scalar = M;
  static constexpr std::size_t count = 1;
  static constexpr bool is_vector = false;
};
template <typename T, std::size_t N>
struct MemberTraits<Vector<T, N>> {
  using scalar = T;
  static constexpr std::size_t count = N;
  static constexpr bool is_vector = true;
};

TESSERA_HOST_DEVICE constexpr std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

template <std::size_t I, typename M, typename... Ms>
struct NthMember {
  using type = typename NthMember<I - 1, Ms...>::type;
};
template <typename M, typename... Ms>
struct NthMember<0, M, Ms...> {
  using type = M;
};
}  // namespace detail

/// Offsets of `Members...` in each layout, all compile-time constants.
///
///   using D = tessera::StorageDescriptor<tessera::Vector<float, 3>, int>;
///   static_assert(D::aos_offset<1> == 12 && D::site_bytes == 16);
template <typename... Members>
struct StorageDescriptor {
  static_assert(sizeof...(Members) >= 1, "a StorageDescriptor needs at least one member");

  static constexpr std::size_t members = sizeof...(Members);
  template <std::size_t I>
  using member = typename detail::NthMember<I, Members...>::type;
  /// The scalar type of member I (T for both T and Vector<T, N>).
  template <std::size_t I>
  using scalar = typename detail::MemberTraits<member<I>>::scalar;
  /// How many scalars member I holds.
  template <std::size_t I>
  static constexpr std::size_t count = detail::MemberTraits<member<I>>::count;
  template <std::size_t I>
  static constexpr bool is_vector = detail::MemberTraits<member<I>>::is_vector;

  /// Scalars per site, all members together.
  static constexpr std::size_t components = (detail::MemberTraits<Members>::count + ...);
  /// Bytes per site without padding: the SoA layouts store exactly this much per site.
  static constexpr std::size_t site_bytes =
      ((sizeof(typename detail::MemberTraits<Members>::scalar) * detail::MemberTraits<Members>::count) + ...);
  static constexpr std::size_t max_align = [] {
    std::size_t a = 1;
    ((a = a < alignof(typename detail::MemberTraits<Members>::scalar)
              ? alignof(typename detail::MemberTraits<Members>::scalar)
              : a),
     ...);
    return a;
  }();

 private:
  static constexpr std::size_t sizes[] = {
      (sizeof(typename detail::MemberTraits<Members>::scalar) * detail::MemberTraits<Members>::count)...};
  static constexpr std::size_t aligns[] = {alignof(typename detail::MemberTraits<Members>::scalar)...};

  static constexpr std::size_t aos_offset_of(std::size_t i) {
    std::size_t off = 0;
    for (std::size_t m = 0; m < i; ++m) off = detail::round_up(off, aligns[m]) + sizes[m];
    return detail::round_up(off, aligns[i]);
  }
  static constexpr std::size_t soa_prefix_of(std::size_t i) {
    std::size_t off = 0;
    for (std::size_t m = 0; m < i; ++m) off += sizes[m];
    return off;
  }

 public:
  /// Byte offset of member I inside one AoS element (each member aligned, as in a struct).
  template <std::size_t I>
  static constexpr std::size_t aos_offset = aos_offset_of(I);
  /// Bytes of one AoS element, padded to the strictest member alignment like a struct.
  static constexpr std::size_t aos_bytes =
      detail::round_up(aos_offset_of(members - 1) + sizes[members - 1], max_align);
  /// SoA: bytes per site taken by the members before I. Member I's component j of a run of
  /// `pitch` sites starts `pitch * (soa_prefix<I> + j * sizeof(scalar<I>))` bytes in.
  template <std::size_t I>
  static constexpr std::size_t soa_prefix = soa_prefix_of(I);
};

}  // namespace tessera
