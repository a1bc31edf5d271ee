#pragma once
// The C++ side of tessera/targetdp.h: failed calls throw tessera::Error, and
// `kernel TARGET_LAUNCH(N) (args...)` captures the arguments for the workers that run the kernel.
// Included by targetdp.h only; not a header to include on its own.

#include <tessera/core/error.hpp>

#include <cstddef>
#include <memory>
#include <tuple>
#include <utility>

inline void tdp_check_(tdpStatus status, const char* /*call*/) {
  if (status != tdpSuccess) throw ::tessera::Error(tdp_last_error());
}

namespace tessera::targetdp::detail {

/// The arguments of one launch, copied by value as a CUDA launch copies them.
template <class... Args>
struct PendingLaunch {
  std::size_t extent;
  int vvl;
  const char* where;
  std::tuple<Args...> args;
};

/// `Launch(extent, VVL, where)(args...)`: the right operand of `kernel * ...`, which is what
/// `kernel TARGET_LAUNCH(N) (args...)` expands to.
struct Launch {
  std::size_t extent;
  int vvl;
  const char* where;
  Launch(std::size_t e, int v, const char* w) : extent(e), vvl(v), where(w) {}
  template <class... Args>
  PendingLaunch<std::decay_t<Args>...> operator()(Args&&... args) const {
    return {extent, vvl, where, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
  }
};

template <class... Params, class... Args>
void operator*(void (*kernel)(Params...), PendingLaunch<Args...>&& launch) {
  static_assert(sizeof...(Params) == sizeof...(Args), "TARGET_LAUNCH: the kernel takes a different number of arguments");
  struct Closure {
    void (*kernel)(Params...);
    std::tuple<Args...> args;
  };
  auto* closure = new Closure{kernel, std::move(launch.args)};
  auto run = [](void* c) {
    auto* self = static_cast<Closure*>(c);
    std::apply([self](auto&... a) { self->kernel(a...); }, self->args);
  };
  auto release = [](void* c) { delete static_cast<Closure*>(c); };
  tdp_check_(tdp_launch_owned(launch.extent, launch.vvl, run, closure, release, launch.where), "TARGET_LAUNCH");
}

}  // namespace tessera::targetdp::detail
