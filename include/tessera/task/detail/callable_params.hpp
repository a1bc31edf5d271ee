#pragma once
// The parameter types of a non-generic callable (a function pointer, or a class with one
// operator()), so that arguments typed only at run time can be checked against them.

#include <cstddef>
#include <tuple>
#include <type_traits>

namespace tessera::detail {

template <class M>
struct member_params {
  static constexpr bool known = false;
};
#define TESSERA_MEMBER_PARAMS(QUALIFIERS)                         \
  template <class R, class C, class... P>                         \
  struct member_params<R (C::*)(P...) QUALIFIERS> {               \
    static constexpr bool known = true;                           \
    using type = std::tuple<P...>;                                \
  };
TESSERA_MEMBER_PARAMS()
TESSERA_MEMBER_PARAMS(const)
TESSERA_MEMBER_PARAMS(noexcept)
TESSERA_MEMBER_PARAMS(const noexcept)
#undef TESSERA_MEMBER_PARAMS

template <class F, class = void>
struct callable_params {
  static constexpr bool known = false;
};
template <class F>
struct callable_params<F, std::void_t<decltype(&F::operator())>> : member_params<decltype(&F::operator())> {};
template <class R, class... P>
struct callable_params<R (*)(P...), void> {
  static constexpr bool known = true;
  using type = std::tuple<P...>;
};

/// The type of parameter I of F, or void* when F's parameters cannot be read (a generic lambda).
template <class F, std::size_t I, bool Known = callable_params<F>::known>
struct param_at {
  using type = void*;
};
template <class F, std::size_t I>
struct param_at<F, I, true> {
  using params = typename callable_params<F>::type;
  using type = std::conditional_t<(I < std::tuple_size_v<params>), std::tuple_element_t<(I < std::tuple_size_v<params> ? I : 0), params>, void*>;
};

}  // namespace tessera::detail
