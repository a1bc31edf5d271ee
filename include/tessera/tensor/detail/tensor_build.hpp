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
  PartitionRequest request;
  request.name = &options_.name;
  request.dims = D;
  request.sizes = sizes.sizes;
  request.partitions = options_.partitions.sizes;
  request.sub_partitions = options_.sub_partitions.sizes;
  request.padding = options_.padding.coords;
  request.spaces = options_.spaces;
  request.num_spaces = memory_->num_spaces();
  PartitionPlan plan = make_partition_plan(request);  // throws before anything changes

  std::vector<BlockGeometry<D>> geometry;
  std::vector<Buffer> buffers;
  for (std::size_t b = 0; b < plan.num_blocks(); ++b) {
    Box<D> interior;
    for (std::size_t d = 0; d < D; ++d) {
      const std::size_t g = plan.grid_coord(b, d);
      interior.lo.coords[d] = plan.cuts[d][g];
      interior.hi.coords[d] = plan.cuts[d][g + 1];
    }
    geometry.push_back(make_block_geometry<T, L>(interior, options_.padding));
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
}

template <typename T, std::size_t D, Layout L>
Error Tensor<T, D, L>::out_of_range(const Index<D>& i, std::size_t d) const {
  std::ostringstream os;
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
  const HostAccess<T, D, L> h(*this, Access::read);
  for (std::size_t b = 0; b < num_blocks(); ++b) {
    const BlockView<T, D, L> v = h.block(b);
    const Box<D>& in = geometry_[b].interior;
    for_each_index(in, [&](const Index<D>& i) { dense[sizes_.linear(i)] = T(v.at(i - in.lo)); });
  }
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
