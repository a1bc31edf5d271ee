#pragma once
// unrolled_for<N>(f): call f once per I in 0..N-1 with I as a compile-time constant, so the body
// can index tuples, pick template arguments or touch one dimension without a runtime loop.

#include <cstddef>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"

namespace tessera {

/// The compile-time loop counter unrolled_for passes. It is a std::integral_constant (so
/// `decltype(i)::value` works) whose conversion to std::size_t also works in device code.
///
///   unrolled_for<3>([&](auto i) { sum += std::get<i>(tuple); });
template <std::size_t I>
struct Constant : std::integral_constant<std::size_t, I> {
  TESSERA_HOST_DEVICE constexpr operator std::size_t() const noexcept { return I; }
};

namespace detail {
TESSERA_NO_EXEC_CHECK
template <typename F, std::size_t... Is>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr void unrolled_for_impl(F& f,
                                                                          std::index_sequence<Is...>) {
  (f(Constant<Is>{}), ...);
}
}  // namespace detail

/// Calls `f(Constant<0>{})`, ..., `f(Constant<N-1>{})` in that order, fully unrolled.
///
///   unrolled_for<D>([&](auto d) { out[d] = a[d] + b[d]; });
TESSERA_NO_EXEC_CHECK
template <std::size_t N, typename F>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr void unrolled_for(F&& f) {
  detail::unrolled_for_impl(f, std::make_index_sequence<N>{});
}

}  // namespace tessera
