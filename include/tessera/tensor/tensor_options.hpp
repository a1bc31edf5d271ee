#pragma once
// TensorOptions<D>: how a Tensor is split over devices (partitions), within each device
// (sub-partitions), how much padding each block carries, where partitions live, and its name.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/index.hpp"
#include "tessera/core/ranks.hpp"

namespace tessera {

/// Options for Tensor's constructor. Defaults: one partition, no sub-partitions, no padding,
/// partitions on every accelerator round-robin (the host when there is none), name "tensor".
///
///   TensorOptions<2> o;
///   o.partitions = {2, 2};       // 4 device partitions (Ripple Listing 1)
///   o.sub_partitions = {2, 2};   // each split 2x2 again: 16 blocks
///   o.with_padding(1).named("u");
template <std::size_t D>
struct TensorOptions {
  /// Partitions per dimension; partition p is placed on spaces[p % spaces.size()].
  Extent<D> partitions = Extent<D>::filled(1);
  /// Blocks per dimension inside each partition (they share the partition's memory space).
  Extent<D> sub_partitions = Extent<D>::filled(1);
  /// Padding sites on both sides of each dimension of every block.
  Index<D> padding{};
  /// Memory spaces of the MemoryManager (0 = host, i = accelerator i-1) the partitions are put
  /// on, round-robin. Empty: every accelerator, or the host when there are none.
  std::vector<std::size_t> spaces{};
  /// Names the tensor in errors, buffers ("<name>[b]") and traces.
  std::string name = "tensor";
  /// The ranks the tensor is spread over (a tessera::dist::Communicator); null: this process
  /// holds all of it. Each rank then holds one part of the global interior, cut into
  /// partitions and sub-partitions as above; the Ranks must outlive the tensor.
  Ranks* ranks = nullptr;
  /// Ranks per dimension (product: the number of ranks); all zero: the grid with the fewest
  /// halo sites (see rank_decomposition.hpp).
  Extent<D> rank_grid = Extent<D>::filled(0);
  /// Dimensions along which the domain wraps: the halo exchange (exchange_padding, padded
  /// access in a Graph) also fills the padding at the domain's edges from the opposite side,
  /// between blocks, devices and ranks alike.
  std::array<bool, D> periodic{};

  /// The same padding in every dimension: `TensorOptions<3>{}.with_padding(2)`.
  TensorOptions& with_padding(std::int64_t width) {
    padding = Index<D>::filled(width);
    return *this;
  }
  TensorOptions& named(std::string n) {
    name = std::move(n);
    return *this;
  }
  /// Spreads the tensor over `r`'s ranks: `TensorOptions<2>{}.with_padding(1).over(comm)`.
  TensorOptions& over(Ranks& r) {
    ranks = &r;
    return *this;
  }
};

}  // namespace tessera
