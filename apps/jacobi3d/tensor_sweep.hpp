#pragma once
// The tensor Jacobi3D's sweep, without MPI: the kernel a distributed tensor's graph runs
// (tensor_solver.hpp) and a benchmark times on one process (bench/kernels/jacobi.cpp), and the
// reference's blocks as one dense grid, to compare a tensor with.

#include "jacobi.hpp"

#include <tessera/core/host_device.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jacobi3d {

/// One iteration of the proxy at one cell: the average of the centre and its six neighbours
/// (in the reference's order), its change (the cell's contribution to the largest), and the
/// planes held at 255 (a cell whose global coordinate is a block's first interior plane in x, y
/// or z), whatever the cut of the grid into ranks and blocks.
struct TensorSweep {
  double n;      // cells per side of a block
  double inv_n;  // 1 / n
  // Whether g is a multiple of n, without an integer division per cell (three per cell cost more
  // than the stencil): the rounded quotient is exact for any side below 2^31. In 32-bit integers
  // and doubles, whose conversions vectorise without AVX-512.
  TESSERA_HOST_DEVICE bool first_plane(std::int64_t g) const {
    const double x = static_cast<double>(static_cast<std::int32_t>(g));
    return static_cast<double>(static_cast<std::int32_t>(x * inv_n + 0.5)) * n == x;
  }
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
