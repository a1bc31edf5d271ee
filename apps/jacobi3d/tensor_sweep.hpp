#pragma once
// The tensor Jacobi3D's sweep, without MPI: the kernel a distributed tensor's graph runs
// (tensor_solver.hpp) and a benchmark times on one process (bench/kernels/jacobi.cpp), and the
// reference's blocks as one dense grid, to compare a tensor with.

#include "jacobi.hpp"

#include <tessera/core/error.hpp>
#include <tessera/core/host_device.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jacobi3d {

/// Whether an index is a multiple of n, exactly, without a division per cell (three a cell cost
/// more than the stencil). With n = 2^s m, m odd, g is a multiple of n exactly when g times the
/// inverse of m modulo 2^64, rotated right by s, is at most (2^64 - 1) / n (Hacker's Delight,
/// 2nd ed., §10-17): a multiply, a rotate and a compare. In 64-bit lanes, as many to a vector as
/// the doubles': with 32-bit lanes GCC ran the sweep's doubles in 32-byte halves, and the
/// rounded quotient in doubles that this replaced took eight instructions for 4 lanes (one core,
/// 128^3: 1.33 ns a cell with 32-bit lanes, 1.16 with 64-bit). For indices from 0 to 2^63 - 1.
struct MultipleOf {
  std::uint64_t inverse = 1;    // m^-1 modulo 2^64
  std::uint64_t limit = ~0ull;  // (2^64 - 1) / n
  std::uint64_t shift = 0;      // s

  static MultipleOf of(std::int64_t n) {
    if (n < 1) throw tessera::Error("jacobi3d: a block of " + std::to_string(n) + " cells a side (at least 1)");
    MultipleOf t;
    auto m = static_cast<std::uint64_t>(n);
    while ((m & 1u) == 0) {
      m >>= 1;
      ++t.shift;
    }
    // Newton's iteration for the inverse modulo 2^64: m is its own inverse modulo 2^3, and each
    // step doubles the bits that are right.
    std::uint64_t inv = m;
    for (int k = 0; k < 5; ++k) inv *= 2u - m * inv;
    t.inverse = inv;
    t.limit = ~0ull / static_cast<std::uint64_t>(n);
    return t;
  }
  TESSERA_HOST_DEVICE bool operator()(std::int64_t g) const {
    const std::uint64_t p = static_cast<std::uint64_t>(g) * inverse;
    return ((p >> shift) | (p << ((64u - shift) & 63u))) <= limit;
  }
};

/// One iteration of the proxy at one cell: the average of the centre and its six neighbours
/// (in the reference's order), its change (the cell's contribution to the largest), and the
/// planes held at 255 (a cell whose global coordinate is a block's first interior plane in x, y
/// or z), whatever the cut of the grid into ranks and blocks.
struct TensorSweep {
  MultipleOf first_plane;  // of a block of n cells a side

  static TensorSweep for_blocks_of(std::int64_t n) { return {MultipleOf::of(n)}; }

  template <typename In, typename Out, typename Change>
  TESSERA_HOST_DEVICE void operator()(In in, Out out, Change change) const {
    const double c = *in;
    const double v = (c + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1) +
                      *in.offset(2, -1) + *in.offset(2, 1)) /
                     7.0;
    *change = std::fabs(v - c);
    // Without branches (|, not ||), so the row vectorises.
    const bool held = first_plane(in.global_idx(0)) | first_plane(in.global_idx(1)) | first_plane(in.global_idx(2));
    *out = held ? 255.0 : v;
  }
};

/// The reference's blocks as one dense grid (x fastest), to compare with TensorRun::field.
inline std::vector<double> dense_grid(const Problem& p, const std::vector<BlockGrid>& grid) {
  const int n = p.cells(), size = p.size;
  std::vector<double> dense(static_cast<std::size_t>(size) * size * size);
  for (int id = 0; id < static_cast<int>(grid.size()); ++id) {
    const BlockIndex bi = coords(id, p.blocks);
    const BlockGrid& b = grid[static_cast<std::size_t>(id)];
    for (int k = 1; k <= n; ++k)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i) {
          const std::size_t x = static_cast<std::size_t>(bi.x * n + i - 1),
                            y = static_cast<std::size_t>(bi.y * n + j - 1),
                            z = static_cast<std::size_t>(bi.z * n + k - 1);
          dense[x + static_cast<std::size_t>(size) * (y + static_cast<std::size_t>(size) * z)] = b.t[b.at(i, j, k)];
        }
  }
  return dense;
}

}  // namespace jacobi3d
