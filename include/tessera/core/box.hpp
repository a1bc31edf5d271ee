#pragma once
// Box<D>: a half-open box [lo, hi) of grid points, the unit tessera uses for tiles, halos and
// the regions a task reads or writes. Everything here is constexpr and usable in kernels.

#include <cassert>
#include <cstddef>
#include <cstdint>

#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"

namespace tessera {

/// The points p with lo[d] <= p[d] < hi[d] in every dimension; empty if hi[d] <= lo[d] anywhere.
///
///   Box<2> tile{{0, 0}, {16, 8}};  tile.volume();  // 128
template <std::size_t D>
struct Box {
  Index<D> lo{};
  Index<D> hi{};

  constexpr Box() = default;
  TESSERA_HOST_DEVICE constexpr Box(const Index<D>& lo_, const Index<D>& hi_) noexcept
      : lo(lo_), hi(hi_) {}
  /// [0, extent): the whole of a dense grid.
  TESSERA_HOST_DEVICE constexpr explicit Box(const Extent<D>& e) noexcept {
    for (std::size_t d = 0; d < D; ++d) hi.coords[d] = static_cast<std::int64_t>(e.sizes[d]);
  }

  TESSERA_HOST_DEVICE constexpr bool empty() const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (hi.coords[d] <= lo.coords[d]) return true;
    return false;
  }

  /// hi - lo, with inverted dimensions clamped to 0.
  TESSERA_HOST_DEVICE constexpr Extent<D> extent() const noexcept {
    Extent<D> e;
    for (std::size_t d = 0; d < D; ++d)
      e.sizes[d] = hi.coords[d] > lo.coords[d] ? static_cast<std::size_t>(hi.coords[d] - lo.coords[d])
                                               : 0;
    return e;
  }

  TESSERA_HOST_DEVICE constexpr std::size_t volume() const noexcept { return extent().volume(); }

  TESSERA_HOST_DEVICE constexpr bool contains(const Index<D>& p) const noexcept {
    for (std::size_t d = 0; d < D; ++d)
      if (p.coords[d] < lo.coords[d] || p.coords[d] >= hi.coords[d]) return false;
    return true;
  }

  /// Every point of `b` is in this box; an empty `b` is in every box.
  TESSERA_HOST_DEVICE constexpr bool contains(const Box& b) const noexcept {
    if (b.empty()) return true;
    for (std::size_t d = 0; d < D; ++d)
      if (b.lo.coords[d] < lo.coords[d] || b.hi.coords[d] > hi.coords[d]) return false;
    return true;
  }

  /// The common points; Box{} (lo == hi == origin) when there are none, so results compare
  /// and print predictably.
  TESSERA_HOST_DEVICE constexpr Box intersect(const Box& b) const noexcept {
    Box r;
    for (std::size_t d = 0; d < D; ++d) {
      r.lo.coords[d] = lo.coords[d] > b.lo.coords[d] ? lo.coords[d] : b.lo.coords[d];
      r.hi.coords[d] = hi.coords[d] < b.hi.coords[d] ? hi.coords[d] : b.hi.coords[d];
    }
    return r.empty() ? Box{} : r;
  }

  TESSERA_HOST_DEVICE constexpr Box shifted(const Index<D>& offset) const noexcept {
    return Box{lo + offset, hi + offset};
  }

  /// Padded by `pad[d]` on both sides of dimension d (negative shrinks), e.g. to add a halo.
  TESSERA_HOST_DEVICE constexpr Box grown(const Index<D>& pad) const noexcept {
    return Box{lo - pad, hi + pad};
  }
  TESSERA_HOST_DEVICE constexpr Box grown(std::int64_t pad) const noexcept {
    return grown(Index<D>::filled(pad));
  }

  /// Set equality: equal corners, or both empty (an empty box has no meaningful corners).
  TESSERA_HOST_DEVICE friend constexpr bool operator==(const Box& a, const Box& b) noexcept {
    const bool ae = a.empty();
    const bool be = b.empty();
    if (ae || be) return ae && be;
    return a.lo == b.lo && a.hi == b.hi;
  }
};

template <std::size_t D>
Box(Index<D>, Index<D>) -> Box<D>;
template <std::size_t D>
Box(Extent<D>) -> Box<D>;

/// Up to 2*D boxes in place, no heap: what difference() returns.
///
///   for (const Box<3>& piece : difference(a, b)) send(piece);
template <std::size_t D>
class BoxList {
public:
  static constexpr std::size_t capacity = 2 * D;

  TESSERA_HOST_DEVICE constexpr std::size_t size() const noexcept { return count_; }
  TESSERA_HOST_DEVICE constexpr bool empty() const noexcept { return count_ == 0; }

  TESSERA_HOST_DEVICE constexpr void push_back(const Box<D>& b) noexcept {
    assert(count_ < capacity);
    boxes_[count_++] = b;
  }

  TESSERA_HOST_DEVICE constexpr const Box<D>& operator[](std::size_t i) const noexcept {
    assert(i < count_);
    return boxes_[i];
  }

  TESSERA_HOST_DEVICE constexpr const Box<D>* begin() const noexcept { return boxes_; }
  TESSERA_HOST_DEVICE constexpr const Box<D>* end() const noexcept { return boxes_ + count_; }

private:
  Box<D> boxes_[capacity]{};
  std::size_t count_ = 0;
};

/// The points of `a` not in `b`, as at most 2*D pairwise disjoint non-empty boxes. Slabs are
/// peeled off dimension 0 first (below, then above the overlap), so the order is deterministic.
///
///   BoxList<2> rest = difference(Box<2>{{0, 0}, {4, 4}}, Box<2>{{1, 1}, {3, 3}});  // 4 pieces
template <std::size_t D>
TESSERA_HOST_DEVICE constexpr BoxList<D> difference(const Box<D>& a, const Box<D>& b) noexcept {
  BoxList<D> out;
  if (a.empty()) return out;
  const Box<D> overlap = a.intersect(b);
  if (overlap.empty()) {
    out.push_back(a);
    return out;
  }
  // Invariant: `rest` holds what is left of a \ b plus the overlap; each step trims one side of
  // one dimension down to the overlap, so the trimmed slabs cannot meet each other.
  Box<D> rest = a;
  for (std::size_t d = 0; d < D; ++d) {
    if (rest.lo.coords[d] < overlap.lo.coords[d]) {
      Box<D> piece = rest;
      piece.hi.coords[d] = overlap.lo.coords[d];
      out.push_back(piece);
      rest.lo.coords[d] = overlap.lo.coords[d];
    }
    if (overlap.hi.coords[d] < rest.hi.coords[d]) {
      Box<D> piece = rest;
      piece.lo.coords[d] = overlap.hi.coords[d];
      out.push_back(piece);
      rest.hi.coords[d] = overlap.hi.coords[d];
    }
  }
  return out;
}

/// Calls `f(const Index<D>&)` for every point of `box`, dimension 0 fastest (the order of
/// Extent::linear), nothing if the box is empty.
///
///   for_each_index(Box<2>{{0, 0}, {2, 2}}, [&](const Index<2>& p) { sum += grid[p]; });
TESSERA_NO_EXEC_CHECK
template <std::size_t D, typename F>
TESSERA_HOST_DEVICE constexpr void for_each_index(const Box<D>& box, F&& f) {
  if (box.empty()) return;
  Index<D> p = box.lo;
  for (;;) {
    f(static_cast<const Index<D>&>(p));
    std::size_t d = 0;
    for (; d < D; ++d) {  // odometer step: bump x, carry into y, z, ...
      if (++p.coords[d] < box.hi.coords[d]) break;
      p.coords[d] = box.lo.coords[d];
    }
    if (d == D) return;
  }
}

}  // namespace tessera
