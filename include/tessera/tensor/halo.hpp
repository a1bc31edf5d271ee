#pragma once
// HaloTransfer<D>: one copy of halo data between two blocks of a tensor, as data. exchange_padding
// performs them; graph builders turn each into a node (source read, destination write).

#include <cstddef>
#include <utility>
#include <vector>

#include "tessera/core/box.hpp"

namespace tessera {

/// Copy the sites of `box` (GLOBAL coordinates) from block `source`'s interior into block
/// `destination`'s padding. The box lies inside the source's interior and inside the
/// destination's padded box but outside its interior.
///
///   for (const HaloTransfer<2>& h : t.halo_transfers()) graph.add(copy_node(h));
template <std::size_t D>
struct HaloTransfer {
  std::size_t source = 0;
  std::size_t destination = 0;
  Box<D> box{};

  friend bool operator==(const HaloTransfer&, const HaloTransfer&) = default;
};

/// The halo sites one rank sends to, or receives from, rank `peer` in one message of a
/// distributed tensor: boxes (GLOBAL coordinates) of this rank's blocks, in the order both
/// ranks list them (by destination block, then source block, each in its rank's block order).
///
///   for (const RankHalo<2>& h : t.halo_sends()) t.pack_halo(h, bytes);
template <std::size_t D>
struct RankHalo {
  int peer = 0;
  std::vector<std::pair<std::size_t, Box<D>>> boxes;
  std::size_t sites = 0;
};

/// Every halo transfer between blocks with the given interiors and padding: for each destination b and each other block s, the sites of b's padded box inside s's
/// interior. Ordered by destination, then source. Edges and corners come from diagonal
/// neighbours directly, so the transfers are independent of one another.
///
///   auto transfers = halo_transfers(interiors, padding);
template <std::size_t D>
std::vector<HaloTransfer<D>> halo_transfers(const std::vector<Box<D>>& interiors, const Index<D>& padding) {
  std::vector<HaloTransfer<D>> out;
  for (std::size_t b = 0; b < interiors.size(); ++b) {
    const Box<D> padded = interiors[b].grown(padding);
    for (std::size_t s = 0; s < interiors.size(); ++s) {
      if (s == b) continue;
      const Box<D> box = padded.intersect(interiors[s]);
      if (!box.empty()) out.push_back(HaloTransfer<D>{s, b, box});
    }
  }
  return out;
}

}  // namespace tessera
