#pragma once
// The Charm++ jacobi3d proxy as PREMA used it (§4.3): an N^3 grid cut into B^3 blocks, each
// block with one ghost layer; a step averages every interior cell with its six neighbours (the
// centre included, / 7), the ghost faces come from the neighbouring blocks with the block index
// wrapping around (periodic), and after each step every block's first interior plane in x, y
// and z is held at 255.0 (the proxy's constrainBC). It stops when the largest change of a cell
// in a step falls below the threshold, or after the iteration budget.
//
// The block kernel, the face copies and a single-process reference live here, shared by the
// mobile-object solver, the hand-written MPI solver and the tests, so all three do the same
// arithmetic in the same order.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jacobi3d {

struct Problem {
  int size = 64;   // N: cells per side of the whole grid
  int blocks = 4;  // B: blocks per side
  int max_iterations = 26;
  double threshold = 0.01;
  int cells() const { return size / blocks; }  // n: cells per side of a block
};

/// The six faces, in the order messages carry them.
enum Face : int { x_low, x_high, y_low, y_high, z_low, z_high };
constexpr Face opposite(Face f) { return static_cast<Face>(f ^ 1); }

/// One block: (n + 2)^3 values, ghosts included, x fastest.
struct BlockGrid {
  int n = 0;
  std::vector<double> t, next;

  explicit BlockGrid(int cells = 0) : n(cells), t(volume(), 0.0), next(volume(), 0.0) {}
  std::size_t volume() const { return static_cast<std::size_t>(n + 2) * (n + 2) * (n + 2); }
  std::size_t at(int i, int j, int k) const {
    return static_cast<std::size_t>(i) + static_cast<std::size_t>(n + 2) * (j + static_cast<std::size_t>(n + 2) * k);
  }
};

/// The proxy's constrainBC: the first interior plane in x, y and z held at 255.
inline void constrain(BlockGrid& b) {
  const int n = b.n;
  for (int k = 1; k <= n; ++k)
    for (int i = 1; i <= n; ++i) b.t[b.at(i, 1, k)] = 255.0;
  for (int k = 1; k <= n; ++k)
    for (int j = 1; j <= n; ++j) b.t[b.at(1, j, k)] = 255.0;
  for (int j = 1; j <= n; ++j)
    for (int i = 1; i <= n; ++i) b.t[b.at(i, j, 1)] = 255.0;
}

/// A new block from its interior and ghosts; returns the largest change. Then holds the planes.
inline double step(BlockGrid& b) {
  const int n = b.n;
  const std::ptrdiff_t sx = 1, sy = n + 2, sz = static_cast<std::ptrdiff_t>(n + 2) * (n + 2);
  double err = 0;
  for (int k = 1; k <= n; ++k)
    for (int j = 1; j <= n; ++j) {
      const double* c = b.t.data() + b.at(1, j, k);
      double* out = b.next.data() + b.at(1, j, k);
      double line = 0;
#pragma omp simd reduction(max : line)
      for (int i = 0; i < n; ++i) {
        const double v = (c[i] + c[i - sx] + c[i + sx] + c[i - sy] + c[i + sy] + c[i - sz] + c[i + sz]) / 7.0;
        out[i] = v;
        line = std::max(line, std::fabs(v - c[i]));
      }
      err = std::max(err, line);
    }
  std::swap(b.t, b.next);
  constrain(b);
  return err;
}

/// The n x n values of the interior plane next to `face` (what the neighbour on that side needs).
inline void pack_face(const BlockGrid& b, Face face, std::vector<double>& out) {
  const int n = b.n;
  out.resize(static_cast<std::size_t>(n) * n);
  const int plane = (face & 1) ? n : 1;
  std::size_t p = 0;
  for (int a = 1; a <= n; ++a)
    for (int c = 1; c <= n; ++c) {
      switch (face / 2) {
        case 0:
          out[p++] = b.t[b.at(plane, c, a)];
          break;
        case 1:
          out[p++] = b.t[b.at(c, plane, a)];
          break;
        default:
          out[p++] = b.t[b.at(c, a, plane)];
          break;
      }
    }
}

/// Stores a neighbour's plane into the ghost layer on `face`.
inline void unpack_ghost(BlockGrid& b, Face face, const double* in) {
  const int n = b.n;
  const int plane = (face & 1) ? n + 1 : 0;
  std::size_t p = 0;
  for (int a = 1; a <= n; ++a)
    for (int c = 1; c <= n; ++c) {
      switch (face / 2) {
        case 0:
          b.t[b.at(plane, c, a)] = in[p++];
          break;
        case 1:
          b.t[b.at(c, plane, a)] = in[p++];
          break;
        default:
          b.t[b.at(c, a, plane)] = in[p++];
          break;
      }
    }
}

/// Block coordinates and their linear index (x fastest).
struct BlockIndex {
  int x, y, z;
};
inline int linear(BlockIndex b, int blocks) { return b.x + blocks * (b.y + blocks * b.z); }
inline BlockIndex coords(int id, int blocks) { return {id % blocks, (id / blocks) % blocks, id / (blocks * blocks)}; }
/// The neighbour across `face`, the block index wrapping around.
inline BlockIndex neighbour(BlockIndex b, Face face, int blocks) {
  const int d = (face & 1) ? 1 : -1;
  auto wrap = [blocks](int v) { return (v + blocks) % blocks; };
  switch (face / 2) {
    case 0:
      return {wrap(b.x + d), b.y, b.z};
    case 1:
      return {b.x, wrap(b.y + d), b.z};
    default:
      return {b.x, b.y, wrap(b.z + d)};
  }
}

/// Bit-exact digest of a block's interior (for comparing runs across ranks and decompositions).
inline std::uint64_t digest(const BlockGrid& b) {
  std::uint64_t h = 1469598103934665603ull;
  for (int k = 1; k <= b.n; ++k)
    for (int j = 1; j <= b.n; ++j)
      for (int i = 1; i <= b.n; ++i) {
        std::uint64_t bits;
        const double v = b.t[b.at(i, j, k)];
        static_assert(sizeof bits == sizeof v);
        __builtin_memcpy(&bits, &v, sizeof v);
        h = (h ^ bits) * 1099511628211ull;
      }
  return h;
}

struct Outcome {
  int iterations = 0;
  double error = 0;
};

/// Every block in one process, in block order: the reference the distributed solvers must match
/// bit for bit.
inline Outcome reference(const Problem& p, std::vector<BlockGrid>& grid) {
  const int nb = p.blocks * p.blocks * p.blocks;
  grid.assign(static_cast<std::size_t>(nb), BlockGrid(p.cells()));
  for (auto& b : grid) constrain(b);
  Outcome out;
  std::vector<double> face;
  for (int it = 0; it < p.max_iterations; ++it) {
    // Ghosts first, all of them, from the values of the last step.
    std::vector<std::array<std::vector<double>, 6>> faces(static_cast<std::size_t>(nb));
    for (int id = 0; id < nb; ++id)
      for (int f = 0; f < 6; ++f)
        pack_face(grid[static_cast<std::size_t>(id)], static_cast<Face>(f),
                  faces[static_cast<std::size_t>(id)][static_cast<std::size_t>(f)]);
    for (int id = 0; id < nb; ++id)
      for (int f = 0; f < 6; ++f) {
        const int from = linear(neighbour(coords(id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
        unpack_ghost(
            grid[static_cast<std::size_t>(id)], static_cast<Face>(f),
            faces[static_cast<std::size_t>(from)][static_cast<std::size_t>(opposite(static_cast<Face>(f)))].data());
      }
    double err = 0;
    for (auto& b : grid) err = std::max(err, step(b));
    out.iterations = it + 1;
    out.error = err;
    if (err < p.threshold) break;
  }
  return out;
}

}  // namespace jacobi3d
