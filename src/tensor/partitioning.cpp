// Partition arithmetic and the tensor's input errors, compiled once.
#include <tessera/core/error.hpp>
#include <tessera/tensor/partitioning.hpp>

#include <algorithm>
#include <string>

namespace tessera {

namespace {

std::string tensor_label(const PartitionRequest& r) { return "tensor '" + (r.name ? *r.name : std::string("?")) + "'"; }

// Cuts [begin, begin + n) into `parts` runs as evenly as possible, the first n % parts one longer.
void split(std::int64_t begin, std::size_t n, std::size_t parts, std::vector<std::int64_t>& cuts) {
  const std::size_t base = n / parts, extra = n % parts;
  std::int64_t at = begin;
  for (std::size_t i = 0; i < parts; ++i) {
    at += static_cast<std::int64_t>(base + (i < extra ? 1 : 0));
    cuts.push_back(at);
  }
}

}  // namespace

std::size_t PartitionPlan::num_partitions() const noexcept {
  std::size_t n = 1;
  for (std::size_t p : partitions_per_dim) n *= p;
  return n;
}

std::size_t PartitionPlan::locate(std::size_t dim, std::int64_t coord) const noexcept {
  const std::vector<std::int64_t>& c = cuts[dim];
  // The first cut past coord ends the block holding it; upper_bound over cuts[1..].
  const auto it = std::upper_bound(c.begin() + 1, c.end() - 1, coord);
  return static_cast<std::size_t>(it - (c.begin() + 1));
}

std::size_t PartitionPlan::block_number(const std::size_t* grid_coord) const noexcept {
  std::size_t b = 0;
  for (std::size_t d = blocks_per_dim.size(); d-- > 0;) b = b * blocks_per_dim[d] + grid_coord[d];
  return b;
}

std::size_t PartitionPlan::grid_coord(std::size_t b, std::size_t dim) const noexcept {
  for (std::size_t d = 0; d < dim; ++d) b /= blocks_per_dim[d];
  return b % blocks_per_dim[dim];
}

PartitionPlan make_partition_plan(const PartitionRequest& r) {
  const std::string who = tensor_label(r);
  PartitionPlan plan;
  for (std::size_t d = 0; d < r.dims; ++d) {
    const std::string dim = "dimension " + std::to_string(d);
    if (r.sizes[d] == 0)
      throw Error(who + ": " + dim + " has size 0; every dimension needs at least one cell (for a " +
                  "lower-dimensional tensor use a Tensor with fewer dimensions)");
    // Extent stores sizes unsigned, so a negative size arrives wrapped to a huge one.
    if (r.sizes[d] > (std::size_t{1} << 48))
      throw Error(who + ": " + dim + " has size " + std::to_string(static_cast<std::int64_t>(r.sizes[d])) +
                  " (as a signed number); sizes must be positive, and below 2^48 cells per dimension");
    if (r.partitions[d] == 0)
      throw Error(who + ": " + dim + " has 0 partitions; use at least 1 (1 means not partitioned)");
    if (r.sub_partitions[d] == 0)
      throw Error(who + ": " + dim + " has 0 sub-partitions; use at least 1 (1 means not sub-partitioned)");
    const std::size_t blocks = r.partitions[d] * r.sub_partitions[d];
    if (blocks > r.sizes[d])
      throw Error(who + ": " + dim + " has " + std::to_string(r.sizes[d]) + " cells but " +
                  std::to_string(r.partitions[d]) + " partitions x " + std::to_string(r.sub_partitions[d]) +
                  " sub-partitions = " + std::to_string(blocks) + " blocks; use at most " +
                  std::to_string(r.sizes[d]) + " blocks along it");
    std::vector<std::int64_t> part_cuts{0};
    split(0, r.sizes[d], r.partitions[d], part_cuts);
    std::vector<std::int64_t> cuts{0};
    for (std::size_t p = 0; p < r.partitions[d]; ++p)
      split(part_cuts[p], static_cast<std::size_t>(part_cuts[p + 1] - part_cuts[p]), r.sub_partitions[d], cuts);
    std::int64_t smallest = cuts[1] - cuts[0];
    for (std::size_t i = 1; i + 1 < cuts.size(); ++i) smallest = std::min(smallest, cuts[i + 1] - cuts[i]);
    if (r.padding[d] < 0)
      throw Error(who + ": padding " + std::to_string(r.padding[d]) + " in " + dim + " is negative; use 0 or more");
    if (r.padding[d] > smallest)
      throw Error(who + ": padding " + std::to_string(r.padding[d]) + " in " + dim +
                  " is wider than the smallest block there (" + std::to_string(smallest) + " cells, " +
                  std::to_string(r.sizes[d]) + " cells over " + std::to_string(blocks) +
                  " blocks); use padding <= " + std::to_string(smallest) + " or fewer partitions along " + dim);
    plan.cuts.push_back(std::move(cuts));
    plan.blocks_per_dim.push_back(blocks);
    plan.partitions_per_dim.push_back(r.partitions[d]);
    plan.sub_partitions_per_dim.push_back(r.sub_partitions[d]);
  }

  std::vector<std::size_t> spaces = r.spaces;
  if (spaces.empty()) {
    for (std::size_t s = 1; s < r.num_spaces; ++s) spaces.push_back(s);
    if (spaces.empty()) spaces.push_back(0);
  }
  for (std::size_t i = 0; i < spaces.size(); ++i)
    if (spaces[i] >= r.num_spaces)
      throw Error(who + ": spaces[" + std::to_string(i) + "] is memory space " + std::to_string(spaces[i]) +
                  ", but the memory manager has spaces 0.." + std::to_string(r.num_spaces - 1) +
                  " (0 = host, 1.." + std::to_string(r.num_spaces - 1) +
                  " = accelerators); pass spaces below " + std::to_string(r.num_spaces));

  std::size_t num_blocks = 1;
  for (std::size_t b : plan.blocks_per_dim) num_blocks *= b;
  for (std::size_t b = 0; b < num_blocks; ++b) {
    std::size_t partition = 0;
    for (std::size_t d = r.dims; d-- > 0;)
      partition = partition * plan.partitions_per_dim[d] + plan.grid_coord(b, d) / plan.sub_partitions_per_dim[d];
    plan.block_partition.push_back(partition);
    plan.block_space.push_back(spaces[partition % spaces.size()]);
  }
  return plan;
}

}  // namespace tessera
