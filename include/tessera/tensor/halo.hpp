#pragma once
// HaloTransfer<D>: one copy of halo data between two blocks of a tensor, as data. exchange_padding
// performs them; graph builders turn each into a node (source read, destination write).

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/box.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

/// Which of a block's padding sites a kernel reads, so that only those are exchanged (OPS
/// declares the same per loop argument, as a stencil). `box()`, the default: all of them, faces,
/// edges and corners, for a kernel that reads diagonal neighbours (a 9- or 27-point stencil).
/// `star()`: only the faces, the padding beside the interior along one dimension at a time (a
/// 5- or 7-point stencil): a 3-D block then takes its halo from 6 neighbours instead of 26.
/// `along({d, ...})`: only the faces along those dimensions (a dimension-split sweep). What a
/// kernel reads outside its stencil is stale, never an error: declare the stencil it has. (The
/// loops front end's `tessera::loops::Stencil` is another thing: an OPS loop's list of points.)
///
///   graph.then_split(jacobi, tessera::concurrent_padded_access(u, tessera::StencilShape::star()), v);
///   u.exchange_padding(tessera::StencilShape::along({0}));
class StencilShape {
 public:
  static constexpr StencilShape box() noexcept { return StencilShape(true, ~std::uint32_t{0}); }
  static constexpr StencilShape star() noexcept { return StencilShape(false, ~std::uint32_t{0}); }
  static StencilShape along(std::initializer_list<std::size_t> dims) {
    if (dims.size() == 0) throw Error("StencilShape::along: name at least one dimension the kernel reads along");
    std::uint32_t mask = 0;
    for (std::size_t d : dims) {
      if (d >= 32)
        throw Error("StencilShape::along: dimension " + std::to_string(d) + " is not a dimension of a tensor");
      mask |= std::uint32_t{1} << d;
    }
    return StencilShape(false, mask);
  }
  /// Whether the kernel reads edges and corners (diagonal neighbours) too.
  constexpr bool reads_diagonals() const noexcept { return diagonals_; }
  constexpr bool reads_along(std::size_t d) const noexcept { return d < 32 && ((dims_ >> d) & 1u) != 0; }
  /// Which of a D-dimensional tensor's halo plans this stencil uses: 0 for box, else the mask of
  /// the dimensions it reads along (star: all D). Throws when it names a dimension D lacks.
  template <std::size_t D>
  std::size_t plan_index() const {
    static_assert(D < 32);
    constexpr std::uint32_t all = (std::uint32_t{1} << D) - 1;
    if (diagonals_) return 0;
    if (dims_ != ~std::uint32_t{0} && (dims_ & ~all) != 0)
      throw Error("a stencil along dimension " + std::to_string(highest(dims_)) + " used with a " + std::to_string(D) +
                  "-dimensional tensor (dimensions 0 to " + std::to_string(D - 1) + ")");
    return dims_ & all;
  }
  /// The stencil whose plan_index is `plan`: box for 0, else the star along the dimensions in
  /// the mask `plan`.
  static constexpr StencilShape of_plan_index(std::size_t plan) noexcept {
    return plan == 0 ? box() : StencilShape(false, static_cast<std::uint32_t>(plan));
  }
  friend constexpr bool operator==(const StencilShape&, const StencilShape&) = default;

 private:
  constexpr StencilShape(bool diagonals, std::uint32_t dims) noexcept : diagonals_(diagonals), dims_(dims) {}
  static std::size_t highest(std::uint32_t mask) noexcept {
    std::size_t d = 0;
    while (mask >>= 1) ++d;
    return d;
  }
  bool diagonals_;
  std::uint32_t dims_;
};

/// The parts of the padded box of a block with interior `interior` and `padding` that a kernel
/// with `stencil` reads: the whole padded box for box(), else the interior grown along each
/// dimension the stencil reads along, one box each (they overlap only in the interior).
template <std::size_t D>
std::vector<Box<D>> halo_regions(const Box<D>& interior, const Index<D>& padding, const StencilShape& stencil) {
  const std::size_t plan = stencil.plan_index<D>();
  if (plan == 0) return {interior.grown(padding)};
  std::vector<Box<D>> regions;
  for (std::size_t d = 0; d < D; ++d) {
    if (((plan >> d) & 1u) == 0) continue;
    Index<D> along{};
    along.coords[d] = padding.coords[d];
    regions.push_back(interior.grown(along));
  }
  return regions;
}

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
/// then periodic image, then halo region). A box is where the sites are on this rank: the
/// sender's in its interior, the receiver's in its padding.
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
/// every block), the sites of b's halo_regions (its padded box, for a box stencil) inside s's
/// interior. Ordered by destination, then source, then image, then region. Edges and corners come
/// from diagonal neighbours directly, so the transfers are independent of one another.
///
///   auto transfers = halo_transfers(interiors, padding);
///   auto faces = halo_transfers(interiors, padding, sizes, periodic, StencilShape::star());
template <std::size_t D>
std::vector<HaloTransfer<D>> halo_transfers(const std::vector<Box<D>>& interiors, const Index<D>& padding,
                                            const Extent<D>& sizes = {}, const std::array<bool, D>& periodic = {},
                                            const StencilShape& stencil = StencilShape::box()) {
  const std::vector<Index<D>> images = periodic_images(sizes, periodic);
  std::vector<HaloTransfer<D>> out;
  for (std::size_t b = 0; b < interiors.size(); ++b) {
    const std::vector<Box<D>> regions = halo_regions(interiors[b], padding, stencil);
    const Box<D> padded = interiors[b].grown(padding);
    for (std::size_t s = 0; s < interiors.size(); ++s)
      for (const Index<D>& shift : images) {
        if (s == b && shift == Index<D>{}) continue;
        const Box<D> source = interiors[s].shifted(shift);
        // Most pairs are far apart: one test here, not one per region (26 for a 3-D box).
        if (padded.intersect(source).empty()) continue;
        for (const Box<D>& region : regions) {
          const Box<D> box = region.intersect(source);
          if (!box.empty()) out.push_back(HaloTransfer<D>{s, b, box, shift});
        }
      }
  }
  return out;
}

}  // namespace tessera
