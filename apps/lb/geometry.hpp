#pragma once
// The lattice of a run: N interior sites per axis plus one halo site on each side, stored with
// z fastest (Ludwig's order, index = (i * (Ny + 2) + j) * (Nz + 2) + k). Fields are SoA: field
// f of site s lives at [f * nsites + s]. A halo site on a walled axis is solid; on a periodic
// axis it is a copy of the site one period away.

#include "d3q19.hpp"
#include "input.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace lb {

struct Geometry {
  std::array<int, 3> n{};
  std::array<int, 3> walls{};
  std::size_t nsites = 0;
  std::size_t stride_x = 0, stride_y = 0;

  explicit Geometry(const Parameters& p) : n(p.size), walls(p.walls) {
    stride_y = static_cast<std::size_t>(n[2]) + 2;
    stride_x = (static_cast<std::size_t>(n[1]) + 2) * stride_y;
    nsites = (static_cast<std::size_t>(n[0]) + 2) * stride_x;
  }

  std::size_t index(int i, int j, int k) const {
    return static_cast<std::size_t>(i) * stride_x + static_cast<std::size_t>(j) * stride_y + static_cast<std::size_t>(k);
  }
  bool interior(int i, int j, int k) const {
    return i >= 1 && i <= n[0] && j >= 1 && j <= n[1] && k >= 1 && k <= n[2];
  }
  bool solid(int i, int j, int k) const {
    const int c[3] = {i, j, k};
    for (int d = 0; d < 3; ++d)
      if (walls[d] && (c[d] == 0 || c[d] == n[d] + 1)) return true;
    return false;
  }
  std::size_t interior_volume() const {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(n[2]);
  }
  /// The span of site indices from the first interior site to the last: every site in it has
  /// all 26 neighbours inside the array, so stencil kernels run over it without bounds tests
  /// (the halo sites inside it compute values nobody reads).
  std::size_t span_first() const { return index(1, 1, 1); }
  std::size_t span_count() const { return index(n[0], n[1], n[2]) - span_first() + 1; }
  /// The offset of the neighbour along velocity p.
  std::ptrdiff_t offset(int p) const {
    return cv[p][0] * static_cast<std::ptrdiff_t>(stride_x) + cv[p][1] * static_cast<std::ptrdiff_t>(stride_y) +
           cv[p][2];
  }

  template <class F>
  void for_each_interior(F&& f) const {
    for (int i = 1; i <= n[0]; ++i)
      for (int j = 1; j <= n[1]; ++j)
        for (int k = 1; k <= n[2]; ++k) f(i, j, k, index(i, j, k));
  }

  /// Pairs (halo site, its periodic image) for every halo site that is not solid.
  void periodic_halo(std::vector<std::size_t>& dst, std::vector<std::size_t>& src) const {
    auto wrap = [](int c, int size) { return c < 1 ? c + size : c > size ? c - size : c; };
    for (int i = 0; i <= n[0] + 1; ++i)
      for (int j = 0; j <= n[1] + 1; ++j)
        for (int k = 0; k <= n[2] + 1; ++k) {
          if (interior(i, j, k) || solid(i, j, k)) continue;
          dst.push_back(index(i, j, k));
          src.push_back(index(wrap(i, n[0]), wrap(j, n[1]), wrap(k, n[2])));
        }
  }

  /// Bounce-back links: (fluid site, solid neighbour, velocity p from the first to the second),
  /// in Ludwig's order (sites with z fastest, then p ascending).
  void wall_links(std::vector<std::size_t>& fluid, std::vector<std::size_t>& wall, std::vector<int>& p_out) const {
    for_each_interior([&](int i, int j, int k, std::size_t s) {
      for (int p = 1; p < nvel; ++p)
        if (solid(i + cv[p][0], j + cv[p][1], k + cv[p][2])) {
          fluid.push_back(s);
          wall.push_back(index(i + cv[p][0], j + cv[p][1], k + cv[p][2]));
          p_out.push_back(p);
        }
    });
  }
};

}  // namespace lb
