#pragma once
// Stream output for Index, Extent and Box, for error messages and test failures. Host only,
// kept apart from the kernel-facing headers so device code never needs <ostream>.

#include <cstddef>
#include <ostream>

#include "tessera/core/box.hpp"
#include "tessera/core/index.hpp"

namespace tessera {

/// Prints `(1, -2, 3)`.
template <std::size_t D>
std::ostream& operator<<(std::ostream& os, const Index<D>& i) {
  os << '(';
  for (std::size_t d = 0; d < D; ++d) os << (d ? ", " : "") << i.coords[d];
  return os << ')';
}

/// Prints `4x3x2` (x first).
template <std::size_t D>
std::ostream& operator<<(std::ostream& os, const Extent<D>& e) {
  for (std::size_t d = 0; d < D; ++d) os << (d ? "x" : "") << e.sizes[d];
  return os;
}

/// Prints `[(0, 0), (4, 3))`, the half-open interval notation.
template <std::size_t D>
std::ostream& operator<<(std::ostream& os, const Box<D>& b) {
  return os << '[' << b.lo << ", " << b.hi << ')';
}

}  // namespace tessera
