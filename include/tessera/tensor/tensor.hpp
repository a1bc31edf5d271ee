#pragma once
// Tensor<T, D, L>: a D-dimensional grid of T (arithmetic, or an owned Record type) laid out as
// L, cut into blocks that live on devices (Ripple §4.1). Each block is an interior box of the
// global grid plus `padding` sites on both sides of every dimension, stored as one Buffer of
// geometry(b).rows() rows of geometry(b).row_bytes bytes (see block_geometry.hpp), so the memory
// layer keeps every block coherent across host and devices.
//
//   Tensor<float, 2> u(memory, {1000, 1000}, TensorOptions<2>{.partitions = {2, 2}});
//   u.fill_from(initial.data());
//   u.load_boundary(ZeroGradient{});
//   u.exchange_padding();

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/box.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/index.hpp"
#include "tessera/layout/layout_traits.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/memory/buffer.hpp"
#include "tessera/memory/memory_manager.hpp"
#include "tessera/tensor/block_geometry.hpp"
#include "tessera/tensor/boundary.hpp"
#include "tessera/tensor/halo.hpp"
#include "tessera/tensor/partitioning.hpp"
#include "tessera/tensor/rank_decomposition.hpp"
#include "tessera/tensor/tensor_options.hpp"

namespace tessera {

namespace detail {
/// Block b's interior in a plan cut from a part whose interior starts at `origin` (global).
template <std::size_t D>
Box<D> block_interior(const PartitionPlan& plan, std::size_t b, const Index<D>& origin) {
  Box<D> interior;
  for (std::size_t d = 0; d < D; ++d) {
    const std::size_t g = plan.grid_coord(b, d);
    interior.lo.coords[d] = origin.coords[d] + plan.cuts[d][g];
    interior.hi.coords[d] = origin.coords[d] + plan.cuts[d][g + 1];
  }
  return interior;
}
}  // namespace detail

template <typename T, std::size_t D, Layout L>
class HostAccess;

template <typename T, std::size_t D, Layout L = Contiguous>
class Tensor {
 public:
  using value_type = T;
  using layout_type = L;
  static constexpr std::size_t dims = D;
  using traits = LayoutTraits<T, L>;
  using view_type = typename traits::view_type;

  /// A tensor of `sizes` interior sites, split and padded as `options` says, every site
  /// (padding included) zero. Throws tessera::Error for bad sizes or options (see
  /// make_partition_plan). With options.ranks, construction is collective: every rank declares
  /// the tensor the same way, in the same order, and holds only its part (local_box()); a
  /// declaration that differs between ranks is a tessera::Error on every rank.
  ///
  ///   TensorOptions<2> o;  o.partitions = {2, 2};  o.sub_partitions = {2, 2};
  ///   Tensor<double, 2> t(memory, {1000, 1000}, o);   // 16 blocks of 250x250 on 4 partitions
  Tensor(MemoryManager& memory, Extent<D> sizes, TensorOptions<D> options = {})
      : memory_(&memory), options_(std::move(options)) {
    build(sizes);
  }
  // Blocks are Buffer handles: a copy would alias them, so tensors move but do not copy.
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  /// Global interior sizes (of the whole tensor, over every rank).
  Extent<D> size() const { return sizes_; }
  /// The ranks the tensor is spread over, or null when this process holds all of it.
  Ranks* ranks() const noexcept { return options_.ranks; }
  /// The part of the global interior this rank holds (all of it when not distributed); the
  /// blocks cut it, so geometry(b).interior lies inside it.
  const Box<D>& local_box() const noexcept { return local_; }
  /// Ranks per dimension (all 1 when not distributed).
  Extent<D> rank_grid() const {
    Extent<D> e = Extent<D>::filled(1);
    for (std::size_t d = 0; d < D && !decomposition_.grid.empty(); ++d) e.sizes[d] = decomposition_.grid[d];
    return e;
  }
  /// The interior box rank `r` holds.
  Box<D> rank_box(int r) const {
    if (decomposition_.grid.empty()) return Box<D>(sizes_);
    Box<D> box;
    for (std::size_t d = 0; d < D; ++d) {
      box.lo.coords[d] = decomposition_.lo(static_cast<std::size_t>(r), d);
      box.hi.coords[d] = decomposition_.hi(static_cast<std::size_t>(r), d);
    }
    return box;
  }
  Index<D> padding() const { return options_.padding; }
  std::size_t num_blocks() const { return geometry_.size(); }
  /// Block b's geometry; its interior is in GLOBAL coordinates.
  const BlockGeometry<D>& geometry(std::size_t b) const { return geometry_.at(b); }
  /// The memory space block b is placed on (where kernels on it run).
  std::size_t space(std::size_t b) const { return plan_.block_space.at(b); }
  /// Block b's memory: rows() == geometry(b).rows(), row_bytes() == geometry(b).row_bytes.
  Buffer& buffer(std::size_t b) const { return buffers_.at(b); }
  /// The device partition block b belongs to (x-fastest over the partition grid).
  std::size_t partition_of(std::size_t b) const { return plan_.block_partition.at(b); }
  std::size_t num_partitions() const { return plan_.num_partitions(); }
  /// Blocks per dimension over the whole tensor (partitions x sub-partitions).
  Extent<D> blocks_per_dim() const {
    Extent<D> e;
    for (std::size_t d = 0; d < D; ++d) e.sizes[d] = plan_.blocks_per_dim[d];
    return e;
  }
  MemoryManager& memory() const { return *memory_; }
  const std::string& name() const { return options_.name; }
  const TensorOptions<D>& options() const { return options_; }

  /// The block that holds global site `i` for the host: the one whose interior contains it,
  /// else (outer padding) the block at the domain's edge whose padded box contains it. Throws
  /// tessera::Error when `i` is beyond the padding.
  ///
  ///   std::size_t b = t.block_of({-1, 5});   // a block of the left edge
  /// On a distributed tensor, `i` must lie in this rank's part or its padding.
  std::size_t block_of(const Index<D>& i) const {
    std::size_t g[D];
    for (std::size_t d = 0; d < D; ++d) {
      const std::int64_t p = options_.padding.coords[d];
      if (i.coords[d] < local_.lo.coords[d] - p || i.coords[d] >= local_.hi.coords[d] + p) throw out_of_range(i, d);
      g[d] = plan_.locate(d, i.coords[d] - local_.lo.coords[d]);
    }
    return plan_.block_number(g);
  }

  /// Host access to every block at once, through the memory layer (copies from devices as
  /// `mode` needs); released when the HostAccess goes away. See host_access.hpp.
  ///
  ///   { auto h = t.host(Access::read_write);  h(3, 4) += 1.0f; }
  HostAccess<T, D, L> host(Access mode) const { return HostAccess<T, D, L>(*this, mode); }

  /// One site by global index (padding allowed), requesting only the row that holds it.
  ///
  ///   float v = t.get({3, 4});
  T get(const Index<D>& i) const {
    const std::size_t b = block_of(i);
    const std::size_t row = row_of(b, i);
    auto* base = static_cast<std::byte*>(buffers_[b].request(Access::read, {row, row + 1}).get());
    const T value = BlockView<T, D, L>{base, geometry_[b]}.at(i - geometry_[b].interior.lo);
    buffers_[b].release(Access::read, {row, row + 1});
    return value;
  }
  /// Writes one site (its owning block's copy; padding copies elsewhere follow at the next
  /// exchange_padding / load_boundary).
  ///
  ///   t.set({3, 4}, 2.0f);
  void set(const Index<D>& i, const T& value) {
    const std::size_t b = block_of(i);
    const std::size_t row = row_of(b, i);
    auto* base = static_cast<std::byte*>(buffers_[b].request(Access::read_write, {row, row + 1}).get());
    BlockView<T, D, L>{base, geometry_[b]}.at(i - geometry_[b].interior.lo) = value;
    buffers_[b].release(Access::read_write, {row, row + 1});
  }

  /// Copies a dense host array of size().volume() values (x fastest) into the interior (on a
  /// distributed tensor, each rank the part it holds).
  ///
  ///   std::vector<float> init(t.size().volume(), 1.0f);  t.fill_from(init.data());
  void fill_from(const T* dense);
  /// Copies the interior into a dense host array of size().volume() values (x fastest). On a
  /// distributed tensor it is collective: every rank gets the whole tensor.
  ///
  ///   std::vector<float> out(t.size().volume());  t.gather_to(out.data());
  void gather_to(T* dense) const;
  /// Sets every site, padding included, to `value`.
  ///
  ///   t.fill(0.5f);
  void fill(const T& value);

  /// New interior sizes, with the same options; the sites inside both the old and the new
  /// interior keep their values, every other site (padding included) is zero. Throws
  /// tessera::Error as the constructor does (and then leaves the tensor unchanged), and for a
  /// distributed tensor (declare a new one).
  ///
  ///   t.resize({2000, 1000});
  void resize(Extent<D> sizes);

  /// Loads the outer padding of every face, dimension 0 first (see boundary.hpp for corners).
  ///
  ///   t.load_boundary(Periodic{});
  template <BoundaryLoader B>
  void load_boundary(const B& loader) {
    for (std::size_t d = 0; d < D; ++d) {
      load_boundary(loader, Face{d, Side::low});
      load_boundary(loader, Face{d, Side::high});
    }
  }
  /// Loads the outer padding of one face (edges and corners of dimensions < face.dim included).
  ///
  ///   t.load_boundary(ConstantBoundary{1.0f}, Face{1, Side::high});
  template <BoundaryLoader B>
  void load_boundary(const B& loader, Face face);

  /// Every halo copy exchange_padding(stencil) makes: inner padding from neighbouring interiors,
  /// all of it (box), or only what `stencil` reads.
  ///
  ///   for (const HaloTransfer<2>& h : t.halo_transfers()) std::cout << h.box << '\n';
  std::vector<HaloTransfer<D>> halo_transfers(const StencilShape& stencil = StencilShape::box()) const {
    std::vector<Box<D>> interiors;
    for (const BlockGeometry<D>& g : geometry_) interiors.push_back(g.interior);
    return tessera::halo_transfers(interiors, options_.padding, sizes_, options_.periodic, stencil);
  }
  /// Fills each block's inner padding (facing another block: faces, edges, corners; only the
  /// faces `stencil` reads along for a star one) from the neighbouring blocks' interiors.
  /// Whole-row halos between two device blocks are copied on the devices; the rest is staged
  /// through the host. On a distributed tensor it is collective (every rank passes the same
  /// stencil), and padding facing another rank's blocks arrives in one message per rank.
  ///
  ///   t.exchange_padding();
  ///   t.exchange_padding(tessera::StencilShape::star());  // a 7-point stencil's: faces only
  void exchange_padding(const StencilShape& stencil = StencilShape::box());
  /// Performs one transfer of halo_transfers().
  ///
  ///   for (auto& h : t.halo_transfers()) t.transfer(h);
  void transfer(const HaloTransfer<D>& h);

  /// Whether transfer(h) copies on the devices (whole rows between two device blocks) rather
  /// than through host requests of the source and destination blocks.
  bool copies_on_devices(const HaloTransfer<D>& h) const;

  /// Distributed tensors: the messages exchange_padding(stencil) (and a Graph's padded access)
  /// sends to and receives from other ranks, one per neighbouring rank.
  const std::vector<RankHalo<D>>& halo_sends(const StencilShape& stencil = StencilShape::box()) const {
    return rank_halo_plan(stencil).sends;
  }
  const std::vector<RankHalo<D>>& halo_recvs(const StencilShape& stencil = StencilShape::box()) const {
    return rank_halo_plan(stencil).recvs;
  }
  /// Writes h's sites, box by box and x fastest, as owned T into `out` (h.sites * sizeof(T)
  /// bytes), reading only the rows involved from wherever the blocks live.
  void pack_halo(const RankHalo<D>& h, std::byte* out) const;
  /// Writes h's sites from `in` (as pack_halo wrote them) into this rank's padding.
  void unpack_halo(const RankHalo<D>& h, const std::byte* in);
  /// A channel of ranks() for this tensor's collectives (gather_to, reductions).
  std::uint64_t collective_channel() const noexcept { return collective_channel_; }

  /// The row of block b that holds global site i.
  std::size_t row_of(std::size_t b, const Index<D>& i) const {
    return static_cast<std::size_t>(geometry_[b].row_of(i - geometry_[b].interior.lo));
  }

 private:
  // A distributed tensor's messages for one stencil, and exchange_padding's bytes for them (one
  // per message, sized when it first runs with that stencil: it runs every step).
  struct RankHaloPlan {
    std::vector<RankHalo<D>> sends, recvs;
    std::vector<std::vector<std::byte>> send_bytes, recv_bytes;
  };
  const RankHaloPlan& rank_halo_plan(const StencilShape& stencil) const;
  void build(const Extent<D>& sizes);
  Error out_of_range(const Index<D>& i, std::size_t d) const;
  void transfer_on_devices(const HaloTransfer<D>& h);
  void transfer_through_host(const HaloTransfer<D>& h);
  PartitionRequest partition_request(const Extent<D>& sizes) const;
  void check_declaration(const Extent<D>& sizes);
  void plan_rank_halos(const PartitionRequest& request);
  void exchange_rank_halos(RankHaloPlan& plan);
  void gather_other_ranks(T* dense) const;
  std::vector<Box<D>> block_interiors(const PartitionRequest& request, const Box<D>& part) const;

  MemoryManager* memory_;
  TensorOptions<D> options_;
  Extent<D> sizes_{};
  PartitionPlan plan_;
  std::vector<BlockGeometry<D>> geometry_;
  mutable std::vector<Buffer> buffers_;  // handles: a const tensor still hands out its blocks
  Box<D> local_{};
  RankDecomposition decomposition_;  // empty grid: not distributed
  // By StencilShape::plan_index<D>(): box, then each set of dimensions a star stencil reads along.
  // Planned with the tensor, so that a const tensor hands them out without a lock.
  std::vector<RankHaloPlan> rank_halos_;
  // exchange_padding's local transfers by plan index, found when it first runs with a stencil:
  // the search is over every pair of blocks, and a step that exchanges runs it every step.
  std::vector<std::optional<std::vector<HaloTransfer<D>>>> local_halos_;
  std::uint64_t halo_channel_ = 0, collective_channel_ = 0;
};

}  // namespace tessera

#include "tessera/tensor/host_access.hpp"
#include "tessera/tensor/detail/tensor_build.hpp"
#include "tessera/tensor/detail/tensor_boundary.hpp"
#include "tessera/tensor/detail/tensor_halo.hpp"
#include "tessera/tensor/detail/tensor_ranks.hpp"
