#pragma once
// HaloTransfer<D>: one copy of halo data between two blocks of a tensor, as data. exchange_padding
// performs them; graph builders turn each into a node (source read, destination write).

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/core/box.hpp"

namespace tessera {

/// Copy the sites of `box` (GLOBAL coordinates) from block `source`'s interior into block
/// `destination`'s padding. The box lies inside the destination's padded box but outside its
/// interior; `box - shift` lies inside the source's interior (`shift` is non-zero only for a
/// periodic tensor's wrapped halos: a multiple of the domain's size along periodic dimensions).
///
///   for (const HaloTransfer<2>& h : t.halo_transfers()) graph.add(copy_node(h));
template <std::size_t D>
struct HaloTransfer {
  std::size_t source = 0;
  std::size_t destination = 0;
  Box<D> box{};
  Index<D> shift{};

  friend bool operator==(const HaloTransfer&, const HaloTransfer&) = default;
};

/// The halo sites one rank sends to, or receives from, rank `peer` in one message of a
/// distributed tensor: boxes (GLOBAL coordinates) of this rank's blocks, in the order both
/// ranks list them (by destination block, then source block, each in its rank's block order,
/// then periodic image). A box is where the sites are on this rank: the sender's in its
/// interior, the receiver's in its padding.
///
///   for (const RankHalo<2>& h : t.halo_sends()) t.pack_halo(h, bytes);
template <std::size_t D>
struct RankHalo {
  int peer = 0;
  std::vector<std::pair<std::size_t, Box<D>>> boxes;
  std::size_t sites = 0;
};

/// The shifts of the periodic images of a domain of `sizes` that a padded box may reach: the
/// origin first, then every combination of -size, 0, +size along the periodic dimensions.
template <std::size_t D>
std::vector<Index<D>> periodic_images(const Extent<D>& sizes, const std::array<bool, D>& periodic) {
  std::vector<Index<D>> images{Index<D>{}};
  for (std::size_t d = 0; d < D; ++d) {
    if (!periodic[d]) continue;
    const std::size_t n = images.size();
    for (std::int64_t k : {-1, 1})
      for (std::size_t i = 0; i < n; ++i) {
        Index<D> shifted = images[i];
        shifted.coords[d] = k * static_cast<std::int64_t>(sizes.sizes[d]);
        images.push_back(shifted);
      }
  }
  return images;
}

/// Every halo transfer between blocks with the given interiors and padding: for each destination
/// b and each other block s (and, along periodic dimensions of a domain of `sizes`, each image of
/// every block), the sites of b's padded box inside s's interior. Ordered by destination, then
/// source, then image. Edges and corners come from diagonal neighbours directly, so the
/// transfers are independent of one another.
///
///   auto transfers = halo_transfers(interiors, padding);
template <std::size_t D>
std::vector<HaloTransfer<D>> halo_transfers(const std::vector<Box<D>>& interiors, const Index<D>& padding,
                                            const Extent<D>& sizes = {}, const std::array<bool, D>& periodic = {}) {
  const std::vector<Index<D>> images = periodic_images(sizes, periodic);
  std::vector<HaloTransfer<D>> out;
  for (std::size_t b = 0; b < interiors.size(); ++b) {
    const Box<D> padded = interiors[b].grown(padding);
    for (std::size_t s = 0; s < interiors.size(); ++s)
      for (const Index<D>& shift : images) {
        if (s == b && shift == Index<D>{}) continue;
        const Box<D> box = padded.intersect(interiors[s].shifted(shift));
        if (!box.empty()) out.push_back(HaloTransfer<D>{s, b, box, shift});
      }
  }
  return out;
}

}  // namespace tessera
