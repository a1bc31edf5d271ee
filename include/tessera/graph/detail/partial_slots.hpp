#pragma once
// PartialSlots: where a Graph's reduce nodes leave their blocks' partials for the final node.
// In page-locked memory from a device's pinned pool where one gives it, so that a GPU block's
// total reaches its slot by a copy in stream order and nothing runs on the host between the
// reduction kernels and the node's completion (a host function there held an H100 idle for
// 80-150 us a step of euler2d); on the heap otherwise (host and sim devices, a full pool).
// Pinned slots go back to their device when the graph is destroyed, so a graph is destroyed
// before its devices, as the tensors it runs on are.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>

#include "tessera/device/device.hpp"

namespace tessera::detail {

template <class R>
class PartialSlots {
 public:
  /// `count` slots holding `identity`, pinned by `pinned_from` when it is not null and can (a
  /// GPU copies only bytes: pinned slots are for trivially copyable partials).
  PartialSlots(std::size_t count, const R& identity, Device* pinned_from) : count_(count) {
    if constexpr (std::is_trivially_copyable_v<R>) {
      if (pinned_from != nullptr && count > 0)
        if (void* p = pinned_from->try_allocate_pinned_host(count * sizeof(R))) {
          slots_ = static_cast<R*>(p);
          pinned_from_ = pinned_from;
          std::uninitialized_fill_n(slots_, count, identity);
          return;
        }
    }
    heap_ = std::make_unique<R[]>(count);
    slots_ = heap_.get();
    std::fill_n(slots_, count, identity);
  }
  ~PartialSlots() {
    if (pinned_from_ != nullptr) pinned_from_->deallocate_pinned_host(slots_, count_ * sizeof(R));
  }
  PartialSlots(const PartialSlots&) = delete;
  PartialSlots& operator=(const PartialSlots&) = delete;

  R& operator[](std::size_t i) noexcept { return slots_[i]; }
  R* data() noexcept { return slots_; }
  const R* begin() const noexcept { return slots_; }
  const R* end() const noexcept { return slots_ + count_; }
  std::size_t size() const noexcept { return count_; }
  /// In page-locked memory (which a GPU reads directly), not on the heap.
  bool pinned() const noexcept { return pinned_from_ != nullptr; }

 private:
  std::size_t count_;
  R* slots_ = nullptr;
  std::unique_ptr<R[]> heap_;
  Device* pinned_from_ = nullptr;
};

}  // namespace tessera::detail
