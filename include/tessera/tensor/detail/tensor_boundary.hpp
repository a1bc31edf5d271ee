#pragma once
// Internal: Tensor::load_boundary on the host. For each block touching a face, the sites of its
// padded box inside the face region are written; their sources are read from whichever block
// holds them (another block for Periodic, or for a block whose inner padding meets the face).
// Only the rows holding those sites are requested, so a face along y or z moves a few rows.

#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/tensor/detail/host_sites.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera {

template <typename T, std::size_t D, Layout L>
template <BoundaryLoader B>
void Tensor<T, D, L>::load_boundary(const B& loader, Face face) {
  const std::size_t d = face.dim;
  if (d >= D)
    throw Error("tensor '" + options_.name + "': load_boundary on a face of dimension " + std::to_string(d) +
                ", but the tensor has " + std::to_string(D) + " dimensions; use a dimension below " + std::to_string(D));
  if constexpr (std::is_same_v<B, Reflective>) {
    if (loader.member != Reflective::no_member) {
      bool ok = false;
      if constexpr (RecordType<T>) ok = boundary::is_vector_member<T>(loader.member);
      if (!ok)
        throw Error("tensor '" + options_.name + "': Reflective{" + std::to_string(loader.member) +
                    "} names a member that is not a tessera::Vector of the element type; name the " +
                    "Vector member whose normal component flips (e.g. the velocity), or use Reflective{} " +
                    "for a plain mirror");
    }
  }
  const std::int64_t p = options_.padding.coords[d];
  if (p == 0) return;
  if constexpr (std::is_same_v<B, Periodic>) {
    // Declared periodic, the halo exchange fills this padding from the other ranks.
    if (options_.ranks && decomposition_.grid[d] > 1 && options_.periodic[d]) return;
    if (options_.ranks && decomposition_.grid[d] > 1)
      throw Error("tensor '" + options_.name + "': a Periodic boundary in dimension " + std::to_string(d) +
                  " of a tensor cut over " + std::to_string(decomposition_.grid[d]) +
                  " ranks along it: the wrapped sites live on other ranks; declare the tensor periodic in it " +
                  "(TensorOptions::periodic), so the halo exchange wraps, or give that dimension one rank");
  }
  const std::int64_t n = static_cast<std::int64_t>(sizes_.sizes[d]);

  // Padding of earlier dimensions (edges and corners), interior of later ones: see boundary.hpp.
  Box<D> region(sizes_);
  for (std::size_t k = 0; k < d; ++k) {
    region.lo.coords[k] -= options_.padding.coords[k];
    region.hi.coords[k] += options_.padding.coords[k];
  }
  region.lo.coords[d] = face.side == Side::low ? -p : n;
  region.hi.coords[d] = face.side == Side::low ? 0 : n + p;

  for (std::size_t tb = 0; tb < num_blocks(); ++tb) {
    const Box<D> box = geometry_[tb].interior.grown(options_.padding).intersect(region);
    if (box.empty()) continue;
    const std::vector<Index<D>> sites = detail::sites_of(box);
    std::vector<T> values(sites.size());
    if constexpr (requires { loader.value; }) {
      static_assert(std::is_convertible_v<decltype(loader.value), T>,
                    "ConstantBoundary{value}: the value must convert to the tensor's element type");
      for (T& v : values) v = static_cast<T>(loader.value);
    } else {
      // Sources grouped by the block holding them, each read under one hold.
      std::map<std::size_t, std::pair<std::vector<Index<D>>, std::vector<std::size_t>>> by_block;
      for (std::size_t k = 0; k < sites.size(); ++k) {
        Index<D> src = sites[k];
        src.coords[d] = boundary::source_coord(loader, face.side, src.coords[d], n);
        auto& entry = by_block[block_of(src)];
        entry.first.push_back(src);
        entry.second.push_back(k);
      }
      for (const auto& [sb, entry] : by_block) {
        const std::vector<T> read = detail::read_sites(*this, sb, entry.first);
        for (std::size_t j = 0; j < read.size(); ++j)
          values[entry.second[j]] = boundary::transform(loader, read[j], d);
      }
    }
    detail::write_sites(*this, tb, sites, values);
  }
}

}  // namespace tessera
