#pragma once
// Internal: the parts of Tensor that spread it over ranks: the collective check of its
// declaration, which halo sites each pair of neighbouring ranks exchange, packing them into one
// message per rank, and the collective gather.

#include <cstring>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "tessera/tensor/detail/host_sites.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera {

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::check_declaration(const Extent<D>& sizes) {
  static_assert(D <= TensorDeclaration::max_dims, "distributed tensors have at most 8 dimensions");
  static_assert(std::is_trivially_copyable_v<T>, "a distributed tensor's elements travel as bytes between ranks");
  TensorDeclaration mine;
  mine.dims = static_cast<std::int64_t>(D);
  mine.element_bytes = static_cast<std::int64_t>(sizeof(T));
  mine.name_hash = declaration_hash(options_.name);
  mine.type_hash = declaration_hash(std::string(typeid(T).name()) + "/" + typeid(L).name());
  for (std::size_t d = 0; d < D; ++d) {
    mine.sizes[d] = static_cast<std::int64_t>(sizes.sizes[d]);
    mine.padding[d] = options_.padding.coords[d];
    mine.partitions[d] = static_cast<std::int64_t>(options_.partitions.sizes[d]);
    mine.sub_partitions[d] = static_cast<std::int64_t>(options_.sub_partitions.sizes[d]);
    mine.rank_grid[d] = static_cast<std::int64_t>(options_.rank_grid.sizes[d]);
    mine.periodic[d] = options_.periodic[d] ? 1 : 0;
  }
  check_same_declaration(*options_.ranks, options_.name, mine);
}

template <typename T, std::size_t D, Layout L>
std::vector<Box<D>> Tensor<T, D, L>::block_interiors(const PartitionRequest& request, const Box<D>& part) const {
  // Another rank's blocks: its part cut by the same rule (its memory spaces do not matter here).
  PartitionRequest r = request;
  Extent<D> sizes = part.extent();
  r.sizes = sizes.sizes;
  r.spaces.clear();
  const PartitionPlan plan = make_partition_plan(r);
  std::vector<Box<D>> out;
  for (std::size_t b = 0; b < plan.num_blocks(); ++b) out.push_back(detail::block_interior(plan, b, part.lo));
  return out;
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::plan_rank_halos(const PartitionRequest& request) {
  const int me = options_.ranks->rank(), n = options_.ranks->size();
  const Index<D> pad = options_.padding;
  const std::vector<Index<D>> images = periodic_images(sizes_, options_.periodic);
  // Plan 0 is the box stencil's, plan m (m > 0) the star stencil's along the dimensions in mask m.
  rank_halos_.assign(std::size_t{1} << D, RankHaloPlan{});
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    const Box<D> theirs = rank_box(q);
    bool near = false;
    for (const Index<D>& shift : images)
      near |= !theirs.shifted(shift).grown(pad).intersect(local_).empty() ||
              !local_.grown(pad).intersect(theirs.shifted(shift)).empty();
    if (!near) continue;
    const std::vector<Box<D>> their_blocks = block_interiors(request, theirs);
    // The box stencil's boxes, each with the block on the other rank and the image it belongs
    // to. A star stencil's boxes are cut from these (its regions lie in the padded box), so the
    // search over every pair of blocks and image runs once, not once per stencil.
    struct Cut {
      std::size_t mine, theirs;
      Box<D> box;  // received: in this rank's padding; sent: in their padding, before the shift back
      Index<D> shift;
    };
    std::vector<Cut> in_cuts, out_cuts;
    for (std::size_t b = 0; b < geometry_.size(); ++b)
      for (std::size_t k = 0; k < their_blocks.size(); ++k)
        for (const Index<D>& shift : images) {
          const Box<D> box = geometry_[b].interior.grown(pad).intersect(their_blocks[k].shifted(shift));
          if (!box.empty()) in_cuts.push_back(Cut{b, k, box, shift});
        }
    for (std::size_t k = 0; k < their_blocks.size(); ++k)
      for (std::size_t b = 0; b < geometry_.size(); ++b)
        for (const Index<D>& shift : images) {
          const Box<D> box = their_blocks[k].grown(pad).intersect(geometry_[b].interior.shifted(shift));
          if (!box.empty()) out_cuts.push_back(Cut{b, k, box, shift});
        }
    for (std::size_t plan = 0; plan < rank_halos_.size(); ++plan) {
      const StencilShape stencil = StencilShape::of_plan_index(plan);
      // Both ranks list a message's boxes by destination block, then source block, then image
      // (the source's image as the destination sees it), then halo region.
      RankHalo<D> in{q, {}, 0}, out{q, {}, 0};
      for (const Cut& c : in_cuts)
        for (const Box<D>& region : halo_regions(geometry_[c.mine].interior, pad, stencil)) {
          const Box<D> box = c.box.intersect(region);
          if (!box.empty()) in.boxes.emplace_back(c.mine, box), in.sites += box.volume();
        }
      for (const Cut& c : out_cuts)
        for (const Box<D>& region : halo_regions(their_blocks[c.theirs], pad, stencil)) {
          const Box<D> box = c.box.intersect(region);
          if (!box.empty()) out.boxes.emplace_back(c.mine, box.shifted(-c.shift)), out.sites += box.volume();
        }
      if (!in.boxes.empty()) rank_halos_[plan].recvs.push_back(std::move(in));
      if (!out.boxes.empty()) rank_halos_[plan].sends.push_back(std::move(out));
    }
  }
}

template <typename T, std::size_t D, Layout L>
const typename Tensor<T, D, L>::RankHaloPlan& Tensor<T, D, L>::rank_halo_plan(const StencilShape& stencil) const {
  static const RankHaloPlan none;
  const std::size_t plan = stencil.plan_index<D>();
  return plan < rank_halos_.size() ? rank_halos_[plan] : none;
}

namespace detail {
/// The rows of block b that the sites of `box` lie in (rows are ordered like the coordinates
/// above x, so the box's first and last sites bound them).
template <typename T, std::size_t D, Layout L>
RowRange rows_of_box(const Tensor<T, D, L>& t, std::size_t b, const Box<D>& box) {
  Index<D> last = box.hi;
  for (std::size_t d = 0; d < D; ++d) last.coords[d] -= 1;
  return RowRange{t.row_of(b, box.lo), t.row_of(b, last) + 1};
}
}  // namespace detail

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::pack_halo(const RankHalo<D>& h, std::byte* out) const {
  for (const auto& [b, box] : h.boxes) {
    const detail::HostHold hold(buffers_[b], Access::read, detail::rows_of_box(*this, b, box));
    const BlockView<T, D, L> v{hold.base(), geometry_[b]};
    const Index<D> lo = geometry_[b].interior.lo;
    for_each_index(box, [&](const Index<D>& i) {
      const T value = T(v.at(i - lo));
      std::memcpy(out, &value, sizeof(T));
      out += sizeof(T);
    });
  }
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::unpack_halo(const RankHalo<D>& h, const std::byte* in) {
  for (const auto& [b, box] : h.boxes) {
    // The box is padding, never whole rows of the block: the rest of each row is read in.
    const detail::HostHold hold(buffers_[b], Access::read_write, detail::rows_of_box(*this, b, box));
    const BlockView<T, D, L> v{hold.base(), geometry_[b]};
    const Index<D> lo = geometry_[b].interior.lo;
    for_each_index(box, [&](const Index<D>& i) {
      T value;
      std::memcpy(&value, in, sizeof(T));
      in += sizeof(T);
      v.at(i - lo) = value;
    });
  }
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::exchange_rank_halos(RankHaloPlan& plan) {
  Ranks& ranks = *options_.ranks;
  // Staging sized once per stencil: exchange_padding runs every step.
  auto& in = plan.recv_bytes;
  auto& out = plan.send_bytes;
  if (in.size() != plan.recvs.size())
    for (const RankHalo<D>& h : plan.recvs) in.emplace_back(h.sites * sizeof(T));
  if (out.size() != plan.sends.size())
    for (const RankHalo<D>& h : plan.sends) out.emplace_back(h.sites * sizeof(T));
  const std::size_t receives = plan.recvs.size();
  wait_for_messages(receives + plan.sends.size(), [&](Ranks::Done done, std::size_t k) {
    if (k < receives) {
      ranks.post_recv(in[k].data(), in[k].size(), plan.recvs[k].peer, halo_channel_, std::move(done));
    } else {
      const RankHalo<D>& h = plan.sends[k - receives];
      pack_halo(h, out[k - receives].data());
      ranks.post_send(out[k - receives].data(), out[k - receives].size(), h.peer, halo_channel_, std::move(done));
    }
  });
  for (std::size_t k = 0; k < receives; ++k) unpack_halo(plan.recvs[k], in[k].data());
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::gather_other_ranks(T* dense) const {
  Ranks& ranks = *options_.ranks;
  const int me = ranks.rank(), n = ranks.size();
  if (n == 1) return;
  // This rank's interior, in the order of its part's sites (x fastest), once for every rank.
  const Box<D> mine = local_;
  std::vector<T> packed;
  packed.reserve(mine.volume());
  for_each_index(mine, [&](const Index<D>& i) { packed.push_back(dense[sizes_.linear(i)]); });
  std::vector<std::vector<T>> theirs(static_cast<std::size_t>(n));
  wait_for_messages(2 * static_cast<std::size_t>(n - 1), [&](Ranks::Done done, std::size_t k) {
    const int peer = static_cast<int>(k / 2) >= me ? static_cast<int>(k / 2) + 1 : static_cast<int>(k / 2);
    if (k % 2 == 0) {
      std::vector<T>& into = theirs[static_cast<std::size_t>(peer)];
      into.resize(rank_box(peer).volume());
      ranks.post_recv(into.data(), into.size() * sizeof(T), peer, collective_channel_, std::move(done));
    } else {
      ranks.post_send(packed.data(), packed.size() * sizeof(T), peer, collective_channel_, std::move(done));
    }
  });
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    const T* from = theirs[static_cast<std::size_t>(q)].data();
    for_each_index(rank_box(q), [&](const Index<D>& i) { dense[sizes_.linear(i)] = *from++; });
  }
}

}  // namespace tessera
