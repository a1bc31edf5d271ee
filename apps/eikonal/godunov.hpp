#pragma once
// The site type and the local solver of the Fast Iterative Method (Jeong & Whitaker, SIAM J. Sci.
// Comput. 30:2512, 2008) for |grad phi| = 1 / f on a uniform grid.
//
//   T a[2] = {1.0, 1.0};                                  // smaller neighbour along x and along y
//   double u = eikonal::godunov_update<double, 2>(a, 1.0);   // 1 + 1 / sqrt(2)

#include <tessera/core/host_device.hpp>
#include <tessera/core/unrolled_for.hpp>
#include <tessera/layout/record.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace eikonal {

/// Where a site is in the FIM: `idle` (not in the active list: far, or done), `active` (in the
/// list: re-solved every iteration), `converged` (left the list this iteration; its neighbours
/// are checked next iteration, then it becomes idle).
struct SiteState {
  static constexpr std::int32_t idle = 0;
  static constexpr std::int32_t active = 1;
  static constexpr std::int32_t converged = 2;
};

/// One grid site: the distance phi and its SiteState. A Record, so the tensor's layout
/// (Contiguous, Strided) is one word in the tensor type.
template <typename T, typename S = tessera::Owned>
struct Cell : tessera::Record<S, T, std::int32_t> {
  TESSERA_RECORD(Cell)
  TESSERA_FIELD(phi, 0)
  TESSERA_FIELD(state, 1)
};

/// The Godunov upwind solution u of sum_d max(u - a_d, 0)^2 = s^2, where a_d is the smaller of
/// the two neighbours along dimension d and s = h / f. Tries the 1-, 2-, then 3-dimensional
/// solution and keeps the first that is causal (u no larger than the next neighbour value), so
/// infinite (not yet reached) neighbours never enter the arithmetic. `a` is sorted in place.
template <typename T, std::size_t D>
TESSERA_HOST_DEVICE inline T godunov_update(T (&a)[D], T s) {
  static_assert(D >= 1 && D <= 3, "the closed forms cover 1, 2 and 3 dimensions");
  auto order = [](T& lo, T& hi) {
    if (hi < lo) {
      const T t = lo;
      lo = hi;
      hi = t;
    }
  };
  if constexpr (D == 2) order(a[0], a[1]);
  if constexpr (D == 3) {
    order(a[0], a[1]);
    order(a[1], a[2]);
    order(a[0], a[1]);
  }
  T u = a[0] + s;  // one upwind neighbour
  if constexpr (D == 1) {
    return u;
  } else {
    if (u <= a[1]) return u;
    // (u - a0)^2 + (u - a1)^2 = s^2. a0 + s > a1 here, so the discriminant 2 s^2 - (a1 - a0)^2
    // exceeds s^2 > 0 and the root exceeds a1: no fallback is needed at this step.
    const T d = a[1] - a[0];
    u = (a[0] + a[1] + std::sqrt(T(2) * s * s - d * d)) / T(2);
    if constexpr (D == 2) {
      return u;
    } else {
      if (u <= a[2]) return u;
      // (u - a0)^2 + (u - a1)^2 + (u - a2)^2 = s^2. The 2-D root lies above a2, so the quadratic
      // is negative at a2 and has real roots; rounding can still push a near-zero discriminant
      // below 0, and then the 2-D solution stands.
      const T sum = a[0] + a[1] + a[2];
      const T squares = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
      const T disc = sum * sum - T(3) * (squares - s * s);
      return disc < T(0) ? u : (sum + std::sqrt(disc)) / T(3);
    }
  }
}

/// The Godunov update at the site `it` points to, from its neighbours' phi (padding included).
template <typename T, typename It>
TESSERA_HOST_DEVICE inline T upwind_value(const It& it, T s) {
  constexpr std::size_t D = It::dims;
  T a[D];
  tessera::unrolled_for<D>([&](auto d) {
    const T lo = (*it.offset(d, -1)).phi();
    const T hi = (*it.offset(d, 1)).phi();
    a[d] = lo < hi ? lo : hi;
  });
  return godunov_update<T, D>(a, s);
}

/// Whether any face neighbour of `it` converged in the last iteration.
template <typename It>
TESSERA_HOST_DEVICE inline bool next_to_converged(const It& it) {
  bool any = false;
  tessera::unrolled_for<It::dims>([&](auto d) {
    any = any || (*it.offset(d, -1)).state() == SiteState::converged ||
          (*it.offset(d, 1)).state() == SiteState::converged;
  });
  return any;
}

}  // namespace eikonal
