#pragma once
// PartitionPlan: how a tensor's global interior is cut into blocks, which device partition each
// block belongs to and which memory space holds it. Dimension-agnostic (runtime vectors), so the
// arithmetic and its error messages are compiled once in libtessera, not in every user TU.
//
// Cutting rule (documented in docs/tensor.md): along each dimension the n cells are split over
// the P partitions as evenly as possible (the first n % P partitions get one extra cell), then
// each partition's cells over its S sub-partitions the same way. Blocks are numbered x-fastest
// over the global block grid of P*S blocks per dimension; partitions x-fastest over the P grid.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct PartitionPlan {
  /// Per dimension: blocks_per_dim[d] + 1 cut positions, cuts[d][0] = 0, back() = size[d].
  std::vector<std::vector<std::int64_t>> cuts;
  std::vector<std::size_t> blocks_per_dim;
  std::vector<std::size_t> partitions_per_dim;
  std::vector<std::size_t> sub_partitions_per_dim;
  /// Per block (x-fastest numbering): its device partition and its memory space.
  std::vector<std::size_t> block_partition;
  std::vector<std::size_t> block_space;

  std::size_t num_blocks() const noexcept { return block_partition.size(); }
  std::size_t num_partitions() const noexcept;
  /// The block grid coordinate along `dim` whose cells contain `coord`, clamped to the first or
  /// last block for coordinates outside [0, size): the block whose padding holds them.
  std::size_t locate(std::size_t dim, std::int64_t coord) const noexcept;
  /// Block number of a block grid coordinate (x fastest).
  std::size_t block_number(const std::size_t* grid_coord) const noexcept;
  /// Block grid coordinate of block `b` along `dim`.
  std::size_t grid_coord(std::size_t b, std::size_t dim) const noexcept;
};

/// What make_partition_plan needs, as plain arrays of length `dims`.
struct PartitionRequest {
  const std::string* name = nullptr;
  std::size_t dims = 0;
  const std::size_t* sizes = nullptr;
  const std::size_t* partitions = nullptr;
  const std::size_t* sub_partitions = nullptr;
  const std::int64_t* padding = nullptr;
  std::vector<std::size_t> spaces;  // empty: accelerators round-robin, host if none
  std::size_t num_spaces = 1;       // the MemoryManager's: 1 + accelerators
};

/// Validates a request and cuts the blocks. Throws tessera::Error, naming the tensor, the
/// dimension and the values, for: a zero size, zero partitions or sub-partitions, more blocks
/// than cells in a dimension, negative padding or padding wider than the smallest block of a
/// dimension, and a space the memory manager does not have.
///
///   PartitionPlan plan = make_partition_plan(request);   // Tensor's constructor does this
PartitionPlan make_partition_plan(const PartitionRequest& request);

}  // namespace tessera
