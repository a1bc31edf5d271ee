#pragma once
// Internal: Tensor construction, resize and the whole-tensor host copies.

#include <cstring>
#include <sstream>
#include <string>

#include "tessera/core/format.hpp"
#include "tessera/tensor/detail/host_sites.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera {

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::build(const Extent<D>& sizes) {
  // A distributed tensor first checks that every rank declared it alike: after that, every
  // rank validates the same options and fails, or not, together (none is left waiting).
  if (options_.ranks) check_declaration(sizes);
  Box<D> local(sizes);
  RankDecomposition decomposition;
  Extent<D> local_sizes = sizes;
  if (options_.ranks) {
    // Validate sizes first (a zero or negative size would make the rank arithmetic meaningless).
    (void)make_partition_plan(partition_request(sizes));
    std::size_t blocks[D];
    for (std::size_t d = 0; d < D; ++d) blocks[d] = options_.partitions.sizes[d] * options_.sub_partitions.sizes[d];
    decomposition = make_rank_decomposition(options_.name, D, sizes.sizes, options_.rank_grid.sizes,
                                            static_cast<std::size_t>(options_.ranks->size()), blocks);
    for (std::size_t d = 0; d < D; ++d) {
      local.lo.coords[d] = decomposition.lo(static_cast<std::size_t>(options_.ranks->rank()), d);
      local.hi.coords[d] = decomposition.hi(static_cast<std::size_t>(options_.ranks->rank()), d);
      local_sizes.sizes[d] = static_cast<std::size_t>(local.hi.coords[d] - local.lo.coords[d]);
    }
  }
  const PartitionRequest request = partition_request(local_sizes);
  PartitionPlan plan = make_partition_plan(request);  // throws before anything changes

  std::vector<BlockGeometry<D>> geometry;
  std::vector<Buffer> buffers;
  for (std::size_t b = 0; b < plan.num_blocks(); ++b) {
    geometry.push_back(make_block_geometry<T, L>(detail::block_interior(plan, b, local.lo), options_.padding));
    buffers.emplace_back(*memory_, geometry.back().rows(), geometry.back().row_bytes,
                         options_.name + "[" + std::to_string(b) + "]");
    // Rows never written cannot be read (Buffer's rule): every block starts as zeros, padding
    // and the alignment tail of each row included.
    const detail::HostHold hold(buffers.back(), Access::write);
    std::memset(hold.base(), 0, geometry.back().bytes());
  }
  sizes_ = sizes;
  plan_ = std::move(plan);
  geometry_ = std::move(geometry);
  buffers_ = std::move(buffers);
  local_ = local;
  decomposition_ = std::move(decomposition);
  if (options_.ranks) {
    plan_rank_halos(request);
    halo_channel_ = options_.ranks->next_channel();
    collective_channel_ = options_.ranks->next_channel();
  }
}

template <typename T, std::size_t D, Layout L>
PartitionRequest Tensor<T, D, L>::partition_request(const Extent<D>& sizes) const {
  PartitionRequest request;
  request.name = &options_.name;
  request.dims = D;
  request.sizes = sizes.sizes;  // `sizes` outlives the request's use
  request.partitions = options_.partitions.sizes;
  request.sub_partitions = options_.sub_partitions.sizes;
  request.padding = options_.padding.coords;
  request.spaces = options_.spaces;
  request.num_spaces = memory_->num_spaces();
  return request;
}

template <typename T, std::size_t D, Layout L>
Error Tensor<T, D, L>::out_of_range(const Index<D>& i, std::size_t d) const {
  std::ostringstream os;
  if (options_.ranks && i.coords[d] >= -options_.padding.coords[d] &&
      i.coords[d] < static_cast<std::int64_t>(sizes_.sizes[d]) + options_.padding.coords[d]) {
    os << "tensor '" << options_.name << "': index " << i << " is held by another rank: rank "
       << options_.ranks->rank() << " holds " << local_.lo << " .. " << local_.hi << " (exclusive) and its padding ("
       << options_.padding.coords[d] << " in dimension " << d
       << "); reach other ranks' sites through gather_to, or pass an index of this rank's part";
    return Error(os.str());
  }
  os << "tensor '" << options_.name << "': index " << i << " is outside the tensor in dimension " << d
     << " (sizes " << sizes_ << ", padding " << options_.padding.coords[d] << ", so valid indices are "
     << -options_.padding.coords[d] << " .. " << static_cast<std::int64_t>(sizes_.sizes[d]) + options_.padding.coords[d] - 1
     << "); pass an index inside the interior or its padding";
  return Error(os.str());
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::fill_from(const T* dense) {
  // read_write, not write: the interior is replaced but each block's padding is kept.
  const HostAccess<T, D, L> h(*this, Access::read_write);
  for (std::size_t b = 0; b < num_blocks(); ++b) {
    const BlockView<T, D, L> v = h.block(b);
    const Box<D>& in = geometry_[b].interior;
    for_each_index(in, [&](const Index<D>& i) { v.at(i - in.lo) = dense[sizes_.linear(i)]; });
  }
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::gather_to(T* dense) const {
  {
    const HostAccess<T, D, L> h(*this, Access::read);
    for (std::size_t b = 0; b < num_blocks(); ++b) {
      const BlockView<T, D, L> v = h.block(b);
      const Box<D>& in = geometry_[b].interior;
      for_each_index(in, [&](const Index<D>& i) { dense[sizes_.linear(i)] = T(v.at(i - in.lo)); });
    }
  }
  if (options_.ranks) gather_other_ranks(dense);
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::fill(const T& value) {
  const HostAccess<T, D, L> h(*this, Access::write);  // every site is overwritten: no copy in
  for (std::size_t b = 0; b < num_blocks(); ++b) {
    const BlockView<T, D, L> v = h.block(b);
    const BlockGeometry<D>& g = geometry_[b];
    for_each_index(Box<D>(g.interior.extent()).grown(g.padding), [&](const Index<D>& i) { v.at(i) = value; });
  }
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::resize(Extent<D> sizes) {
  if (options_.ranks)
    throw Error("tensor '" + options_.name + "': resize of a tensor distributed over ranks; declare a new " +
                "tensor of the new sizes on every rank and copy what you keep");
  Tensor fresh(*memory_, sizes, options_);  // validates first: on error *this is untouched
  {
    const HostAccess<T, D, L> from(*this, Access::read);
    const HostAccess<T, D, L> to(fresh, Access::read_write);
    const Box<D> keep = Box<D>(sizes_).intersect(Box<D>(sizes));
    for_each_index(keep, [&](const Index<D>& i) { to.at(i) = from.at(i); });
  }
  *this = std::move(fresh);
}

}  // namespace tessera
