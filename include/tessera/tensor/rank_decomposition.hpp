#pragma once
// RankDecomposition: how a distributed tensor's global interior is cut over the ranks of a run
// (before each rank cuts its own part into device partitions and blocks). Dimension-agnostic,
// compiled once in libtessera, like PartitionPlan.
//
// Rule (docs/dist.md): ranks form a grid, x fastest; along each dimension the n cells are split
// over the grid's ranks as evenly as possible (the first n % R get one more). Unless the grid is
// given, it is the one with the fewest halo sites (cut faces times their area), ties going to
// cuts along the slowest dimensions (whole rows, so halos between devices stay row copies).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct RankDecomposition {
  /// Ranks per dimension (their product is the run's size).
  std::vector<std::size_t> grid;
  /// Per dimension: grid[d] + 1 cut positions, cuts[d][0] = 0, back() = size[d].
  std::vector<std::vector<std::int64_t>> cuts;

  /// Rank `rank`'s coordinate in the grid along `dim` (x fastest).
  std::size_t coord(std::size_t rank, std::size_t dim) const noexcept;
  /// Rank `rank`'s interior along `dim`: [lo, hi).
  std::int64_t lo(std::size_t rank, std::size_t dim) const noexcept { return cuts[dim][coord(rank, dim)]; }
  std::int64_t hi(std::size_t rank, std::size_t dim) const noexcept { return cuts[dim][coord(rank, dim) + 1]; }
  /// The rank whose interior holds `coords` (each inside [0, size)).
  std::size_t rank_of(const std::int64_t* coords) const noexcept;
};

/// Cuts `sizes` (length `dims`) over `ranks` ranks. `requested` (length dims) all zero: choose
/// the grid; else it is the grid. `blocks` (length dims): the blocks each rank cuts its part
/// into per dimension, so each rank's part needs at least that many cells. Throws
/// tessera::Error, naming the tensor, for a grid whose product is not `ranks`, a partly given
/// grid, or a grid (given or the only ones possible) that leaves a rank fewer cells than blocks.
///
///   RankDecomposition r = make_rank_decomposition("u", 2, sizes, zeros, 4, ones);  // 1 x 4 for 64 x 64
RankDecomposition make_rank_decomposition(const std::string& name, std::size_t dims, const std::size_t* sizes,
                                          const std::size_t* requested, std::size_t ranks, const std::size_t* blocks);

}  // namespace tessera

#include "tessera/core/ranks.hpp"

namespace tessera {

/// What a distributed tensor's declaration is, as numbers every rank compares: see
/// check_same_declaration. At most 8 dimensions.
struct TensorDeclaration {
  static constexpr std::size_t max_dims = 8;
  std::int64_t dims = 0, element_bytes = 0, name_hash = 0, type_hash = 0;
  std::int64_t sizes[max_dims] = {}, padding[max_dims] = {}, partitions[max_dims] = {}, sub_partitions[max_dims] = {},
               rank_grid[max_dims] = {}, periodic[max_dims] = {};
};

/// Collective over `ranks`: throws tessera::Error on every rank unless every rank declared the
/// tensor alike, naming the first rank whose declaration differs from rank 0's and how (on
/// that rank: "this rank declared ..."). Draws one channel.
void check_same_declaration(Ranks& ranks, const std::string& name, const TensorDeclaration& mine);

/// A stable hash of a string (FNV-1a), for declarations compared across ranks.
std::int64_t declaration_hash(const std::string& s) noexcept;

}  // namespace tessera
