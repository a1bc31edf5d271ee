#pragma once
// The record the kernel tests' stencils read and write: a float and a 2-vector, so a Tiled tile
// holds members of two sizes and the stencils read them from both sides.

#include <tessera/layout.hpp>

namespace exec_test {

template <typename S = tessera::Owned>
struct Cell : tessera::Record<S, float, tessera::Vector<float, 2>> {
  TESSERA_RECORD(Cell)
  TESSERA_FIELD(a, 0)
  TESSERA_FIELD(v, 1)
};

}  // namespace exec_test
