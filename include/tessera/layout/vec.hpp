#pragma once
// Small fixed-size vectors for Record members: Vec<T, N> holds values, VecRef<T, N> refers to N
// values that may be spread out in memory (a stride apart: 1 in AoS, a row in SoA, a tile width
// in AoSoA). Both name their first four components x, y, z, w, so `p.velocity().x` reads the
// same whatever the layout. VecRef's names are references, not union members: C++ forbids
// reading a union member other than the last one written, and references carry no such rule.

#include <cstddef>
#include <type_traits>

#include "tessera/core/host_device.hpp"

namespace tessera {

template <typename T, std::size_t N>
struct Vec;
template <typename T, std::size_t N>
class VecRef;

template <typename V>
struct is_vector_like : std::false_type {};
template <typename T, std::size_t N>
struct is_vector_like<Vec<T, N>> : std::true_type {};
template <typename T, std::size_t N>
struct is_vector_like<VecRef<T, N>> : std::true_type {};
/// Vec or VecRef (any constness): what the arithmetic below accepts.
template <typename V>
concept VectorLike = is_vector_like<std::remove_cvref_t<V>>::value;

namespace detail {
// Named components of an owned vector. Reading a component by number goes through a switch on
// the named members rather than pointer arithmetic across them, which C++ does not allow.
template <typename T, std::size_t N>
struct VecValues {
  T c[N];
  TESSERA_HOST_DEVICE constexpr T& at(std::size_t j) noexcept { return c[j]; }
  TESSERA_HOST_DEVICE constexpr const T& at(std::size_t j) const noexcept { return c[j]; }
};
template <typename T>
struct VecValues<T, 1> {
  T x;
  TESSERA_HOST_DEVICE constexpr T& at(std::size_t) noexcept { return x; }
  TESSERA_HOST_DEVICE constexpr const T& at(std::size_t) const noexcept { return x; }
};
template <typename T>
struct VecValues<T, 2> {
  T x, y;
  TESSERA_HOST_DEVICE constexpr T& at(std::size_t j) noexcept { return j == 0 ? x : y; }
  TESSERA_HOST_DEVICE constexpr const T& at(std::size_t j) const noexcept { return j == 0 ? x : y; }
};
template <typename T>
struct VecValues<T, 3> {
  T x, y, z;
  TESSERA_HOST_DEVICE constexpr T& at(std::size_t j) noexcept { return j == 0 ? x : j == 1 ? y : z; }
  TESSERA_HOST_DEVICE constexpr const T& at(std::size_t j) const noexcept {
    return j == 0 ? x : j == 1 ? y : z;
  }
};
template <typename T>
struct VecValues<T, 4> {
  T x, y, z, w;
  TESSERA_HOST_DEVICE constexpr T& at(std::size_t j) noexcept {
    return j == 0 ? x : j == 1 ? y : j == 2 ? z : w;
  }
  TESSERA_HOST_DEVICE constexpr const T& at(std::size_t j) const noexcept {
    return j == 0 ? x : j == 1 ? y : j == 2 ? z : w;
  }
};

template <typename T, std::size_t N>
struct NamedRefs {
  TESSERA_HOST_DEVICE constexpr NamedRefs(T*, std::ptrdiff_t) noexcept {}
};
template <typename T>
struct NamedRefs<T, 1> {
  T& x;
  TESSERA_HOST_DEVICE constexpr NamedRefs(T* p, std::ptrdiff_t) noexcept : x(p[0]) {}
};
template <typename T>
struct NamedRefs<T, 2> {
  T& x;
  T& y;
  TESSERA_HOST_DEVICE constexpr NamedRefs(T* p, std::ptrdiff_t s) noexcept : x(p[0]), y(p[s]) {}
};
template <typename T>
struct NamedRefs<T, 3> {
  T& x;
  T& y;
  T& z;
  TESSERA_HOST_DEVICE constexpr NamedRefs(T* p, std::ptrdiff_t s) noexcept
      : x(p[0]), y(p[s]), z(p[2 * s]) {}
};
template <typename T>
struct NamedRefs<T, 4> {
  T& x;
  T& y;
  T& z;
  T& w;
  TESSERA_HOST_DEVICE constexpr NamedRefs(T* p, std::ptrdiff_t s) noexcept
      : x(p[0]), y(p[s]), z(p[2 * s]), w(p[3 * s]) {}
};
}  // namespace detail

/// N values of T, an aggregate: `Vec<float, 3> v{1, 2, 3};  v.x += v[2];`
template <typename T, std::size_t N>
struct Vec : detail::VecValues<T, N> {
  static_assert(N >= 1, "tessera::Vec needs at least one component");
  using value_type = T;
  static constexpr std::size_t size = N;

  TESSERA_HOST_DEVICE constexpr T& operator[](std::size_t j) noexcept { return this->at(j); }
  TESSERA_HOST_DEVICE constexpr const T& operator[](std::size_t j) const noexcept { return this->at(j); }

  /// Every component set to `value`.
  TESSERA_HOST_DEVICE static constexpr Vec filled(T value) noexcept {
    Vec v{};
    for (std::size_t j = 0; j < N; ++j) v[j] = value;
    return v;
  }
  /// A copy of what `other` refers to (any layout).
  template <VectorLike V>
    requires(std::remove_cvref_t<V>::size == N)
  TESSERA_HOST_DEVICE static constexpr Vec from(const V& other) noexcept {
    Vec v{};
    for (std::size_t j = 0; j < N; ++j) v[j] = static_cast<T>(other[j]);
    return v;
  }
};

/// N values of T that live elsewhere, `stride` elements apart. A VecRef is a reference: copying
/// it copies the reference, assigning to it writes the values (like std::vector<bool>::reference),
/// and a const VecRef still writes through, as a const std::span does.
///
///   VecRef<float, 3> p = particle.position();   // a view into tensor memory in any layout
///   p += velocity * dt;  p.x = 0;
template <typename T, std::size_t N>
class VecRef : public detail::NamedRefs<T, N> {
 public:
  using value_type = std::remove_const_t<T>;
  static constexpr std::size_t size = N;

  TESSERA_HOST_DEVICE constexpr VecRef(T* first, std::ptrdiff_t stride) noexcept
      : detail::NamedRefs<T, N>(first, stride), first_(first), stride_(stride) {}
  VecRef(const VecRef&) = default;

  TESSERA_HOST_DEVICE constexpr T& operator[](std::size_t j) const noexcept {
    return first_[static_cast<std::ptrdiff_t>(j) * stride_];
  }

  TESSERA_HOST_DEVICE constexpr const VecRef& operator=(const VecRef& other) const noexcept {
    for (std::size_t j = 0; j < N; ++j) (*this)[j] = other[j];
    return *this;
  }
  template <VectorLike V>
    requires(std::remove_cvref_t<V>::size == N)
  TESSERA_HOST_DEVICE constexpr const VecRef& operator=(const V& other) const noexcept {
    for (std::size_t j = 0; j < N; ++j) (*this)[j] = static_cast<value_type>(other[j]);
    return *this;
  }
  TESSERA_HOST_DEVICE constexpr operator Vec<value_type, N>() const noexcept {
    return Vec<value_type, N>::from(*this);
  }

 private:
  T* first_;
  std::ptrdiff_t stride_;
};

// Arithmetic on any mix of Vec and VecRef; results are Vec values.
#define TESSERA_VEC_COMPOUND(op)                                                              \
  template <VectorLike A, VectorLike B>                                                       \
    requires(std::remove_cvref_t<A>::size == std::remove_cvref_t<B>::size)                    \
  TESSERA_HOST_DEVICE constexpr A&& operator op##=(A&& a, const B& b) noexcept {              \
    for (std::size_t j = 0; j < std::remove_cvref_t<A>::size; ++j) a[j] op## = b[j];         \
    return static_cast<A&&>(a);                                                               \
  }                                                                                           \
  template <VectorLike A>                                                                     \
  TESSERA_HOST_DEVICE constexpr A&& operator op##=(                                           \
      A&& a, typename std::remove_cvref_t<A>::value_type s) noexcept {                        \
    for (std::size_t j = 0; j < std::remove_cvref_t<A>::size; ++j) a[j] op## = s;             \
    return static_cast<A&&>(a);                                                               \
  }                                                                                           \
  template <VectorLike A, VectorLike B>                                                       \
    requires(std::remove_cvref_t<A>::size == std::remove_cvref_t<B>::size)                    \
  TESSERA_HOST_DEVICE constexpr auto operator op(const A& a, const B& b) noexcept {           \
    using R = Vec<typename std::remove_cvref_t<A>::value_type, std::remove_cvref_t<A>::size>; \
    R r = R::from(a);                                                                         \
    r op## = b;                                                                               \
    return r;                                                                                 \
  }                                                                                           \
  template <VectorLike A>                                                                     \
  TESSERA_HOST_DEVICE constexpr auto operator op(                                             \
      const A& a, typename std::remove_cvref_t<A>::value_type s) noexcept {                   \
    using R = Vec<typename std::remove_cvref_t<A>::value_type, std::remove_cvref_t<A>::size>; \
    R r = R::from(a);                                                                         \
    r op## = s;                                                                               \
    return r;                                                                                 \
  }
TESSERA_VEC_COMPOUND(+)
TESSERA_VEC_COMPOUND(-)
TESSERA_VEC_COMPOUND(*)
TESSERA_VEC_COMPOUND(/)
#undef TESSERA_VEC_COMPOUND

template <VectorLike A>
TESSERA_HOST_DEVICE constexpr auto operator*(typename std::remove_cvref_t<A>::value_type s,
                                             const A& a) noexcept {
  return a * s;
}

template <VectorLike A, VectorLike B>
  requires(std::remove_cvref_t<A>::size == std::remove_cvref_t<B>::size)
TESSERA_HOST_DEVICE constexpr bool operator==(const A& a, const B& b) noexcept {
  for (std::size_t j = 0; j < std::remove_cvref_t<A>::size; ++j)
    if (!(a[j] == b[j])) return false;
  return true;
}

/// Sum of a[j] * b[j].
template <VectorLike A, VectorLike B>
  requires(std::remove_cvref_t<A>::size == std::remove_cvref_t<B>::size)
TESSERA_HOST_DEVICE constexpr auto dot(const A& a, const B& b) noexcept {
  typename std::remove_cvref_t<A>::value_type s{};
  for (std::size_t j = 0; j < std::remove_cvref_t<A>::size; ++j) s += a[j] * b[j];
  return s;
}

}  // namespace tessera
