#pragma once
// FunctionRef: a non-owning reference to a callable, for calls that take a callback and call it
// before they return. Unlike std::function it never allocates, so it suits launch paths.

#include <memory>
#include <type_traits>
#include <utility>

namespace tessera {

template <class Signature>
class FunctionRef;

/// Refers to a callable that outlives the call it is passed to.
///
///   void each(int n, tessera::FunctionRef<void(int)> f) { for (int i = 0; i < n; ++i) f(i); }
///   each(3, [&](int i) { sum += i; });
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): passed like a function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace tessera
