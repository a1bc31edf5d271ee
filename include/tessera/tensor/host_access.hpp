#pragma once
// HostAccess<T, D, L>: every block of a tensor held on the host at once, indexed by GLOBAL
// position. Goes through the memory layer (Buffer::request), so it sees and leaves correct
// values wherever the blocks live; the holds are released when it goes away.

#include <cstddef>
#include <vector>

#include "tessera/tensor/tensor.hpp"

namespace tessera {

/// A scoped host view of a whole tensor. `at(i)` / `operator()(x, y, ...)` take a global index;
/// interior sites come from the block whose interior holds them, padding sites just outside
/// the domain from the edge block whose padded box holds them (Tensor::block_of). Inner padding
/// (a block's copy of a neighbour's site) is reached through block(b).
///
///   {
///     auto h = t.host(Access::read_write);
///     h(0, 0) = 1.0f;          // global (0, 0)
///     h.at({-1, 0}) = 2.0f;    // the left outer padding of row 0
///   }                          // released: kernels may use the blocks again
///
/// Host readers share the tensor (several host(Access::read) at once, get); while a writing
/// HostAccess lives, other host requests on the tensor (get, set, fill_from, another host())
/// throw tessera::Error, and so does a writing one while readers hold.
template <typename T, std::size_t D, Layout L>
class HostAccess {
 public:
  using view_type = typename LayoutTraits<T, L>::view_type;

  HostAccess(const Tensor<T, D, L>& tensor, Access mode) : tensor_(&tensor), mode_(mode) {
    // Request every block first, then wait: the copies from devices run concurrently.
    std::vector<std::future<void*>> pending;
    pending.reserve(tensor.num_blocks());
    try {
      for (std::size_t b = 0; b < tensor.num_blocks(); ++b) pending.push_back(tensor.buffer(b).request(mode));
      for (auto& f : pending) bases_.push_back(static_cast<std::byte*>(f.get()));
    } catch (...) {
      for (std::size_t b = 0; b < pending.size(); ++b) tensor.buffer(b).release(mode);
      throw;
    }
  }
  HostAccess(const HostAccess&) = delete;
  HostAccess& operator=(const HostAccess&) = delete;
  HostAccess(HostAccess&& o) noexcept : tensor_(o.tensor_), mode_(o.mode_), bases_(std::move(o.bases_)) {
    o.tensor_ = nullptr;
  }
  HostAccess& operator=(HostAccess&&) = delete;
  ~HostAccess() { release(); }

  /// Ends the holds early (the destructor then does nothing).
  void release() noexcept {
    if (!tensor_) return;
    for (std::size_t b = 0; b < bases_.size(); ++b) {
      try {
        tensor_->buffer(b).release(mode_);
      } catch (...) {  // a destructor must not throw; release only fails without a hold
      }
    }
    tensor_ = nullptr;
  }

  /// The site at global index `i` (padding allowed; throws tessera::Error beyond it).
  view_type at(const Index<D>& i) const {
    const std::size_t b = tensor_->block_of(i);
    return block(b).at(i - tensor_->geometry(b).interior.lo);
  }
  template <std::integral... Is>
    requires(sizeof...(Is) == D)
  view_type operator()(Is... coords) const {
    return at(Index<D>{coords...});
  }
  /// Block b's memory as a BlockView (block-local indices: interior origin 0).
  BlockView<T, D, L> block(std::size_t b) const { return BlockView<T, D, L>{bases_.at(b), tensor_->geometry(b)}; }

 private:
  const Tensor<T, D, L>* tensor_;
  Access mode_;
  std::vector<std::byte*> bases_;
};

}  // namespace tessera
