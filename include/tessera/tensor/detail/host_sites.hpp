#pragma once
// Internal: reading and writing scattered sites of one block on the host, holding only the rows
// they lie in (readers share rows, a writer holds them alone, as Buffer allows). Boundary loaders and host-staged halo
// copies are built from these two.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tessera/core/box.hpp"
#include "tessera/memory/buffer.hpp"
#include "tessera/tensor/block_geometry.hpp"

namespace tessera {
// Declared, not included: tensor.hpp includes the headers that include this one.
template <typename T, std::size_t D, Layout L>
class Tensor;
}  // namespace tessera

namespace tessera::detail {

/// Releases a host hold on scope exit, so an exception between request and release leaves the
/// buffer usable.
class HostHold {
 public:
  HostHold(Buffer& b, Access mode, RowRange rows)
      : buffer_(b), mode_(mode), rows_(rows), base_(static_cast<std::byte*>(b.request(mode, rows).get())) {}
  HostHold(Buffer& b, Access mode) : HostHold(b, mode, b.all()) {}
  HostHold(const HostHold&) = delete;
  HostHold& operator=(const HostHold&) = delete;
  ~HostHold() {
    try {
      buffer_.release(mode_, rows_);
    } catch (...) {  // only fails without a hold, which the constructor took
    }
  }
  std::byte* base() const noexcept { return base_; }

 private:
  Buffer& buffer_;
  Access mode_;
  RowRange rows_;
  std::byte* base_;
};

/// The hull of the rows of block b that hold `sites` (global indices), and whether those sites
/// cover every row of the hull completely (then a write needs no copy in).
template <typename T, std::size_t D, Layout L>
RowRange rows_of_sites(const Tensor<T, D, L>& t, std::size_t b, const std::vector<Index<D>>& sites, bool& whole_rows) {
  RowRange hull{t.geometry(b).rows(), 0};
  for (const Index<D>& i : sites) {
    const std::size_t r = t.row_of(b, i);
    hull.begin = std::min(hull.begin, r);
    hull.end = std::max(hull.end, r + 1);
  }
  // Sites are distinct, so they fill the hull iff there are as many as the hull's rows hold.
  whole_rows = !sites.empty() && sites.size() == hull.size() * t.geometry(b).padded_extent().sizes[0];
  return hull;
}

/// The values of `sites` (global indices inside block b's padded box) as owned T.
template <typename T, std::size_t D, Layout L>
std::vector<T> read_sites(const Tensor<T, D, L>& t, std::size_t b, const std::vector<Index<D>>& sites) {
  std::vector<T> values;
  if (sites.empty()) return values;
  bool whole = false;
  const RowRange rows = rows_of_sites(t, b, sites, whole);
  const HostHold hold(t.buffer(b), Access::read, rows);
  const BlockView<T, D, L> v{hold.base(), t.geometry(b)};
  const Index<D> lo = t.geometry(b).interior.lo;
  values.reserve(sites.size());
  for (const Index<D>& i : sites) values.push_back(T(v.at(i - lo)));
  return values;
}

/// Writes values[k] to sites[k] (distinct global indices inside block b's padded box).
template <typename T, std::size_t D, Layout L>
void write_sites(const Tensor<T, D, L>& t, std::size_t b, const std::vector<Index<D>>& sites,
                 const std::vector<T>& values) {
  if (sites.empty()) return;
  bool whole = false;
  const RowRange rows = rows_of_sites(t, b, sites, whole);
  // Partly written rows keep their other sites, so they must be read in first.
  const Access mode = whole ? Access::write : Access::read_write;
  const HostHold hold(t.buffer(b), mode, rows);
  const BlockView<T, D, L> v{hold.base(), t.geometry(b)};
  const Index<D> lo = t.geometry(b).interior.lo;
  for (std::size_t k = 0; k < sites.size(); ++k) v.at(sites[k] - lo) = values[k];
}

/// The sites of `box`, x fastest.
template <std::size_t D>
std::vector<Index<D>> sites_of(const Box<D>& box) {
  std::vector<Index<D>> out;
  out.reserve(box.volume());
  for_each_index(box, [&](const Index<D>& i) { out.push_back(i); });
  return out;
}

}  // namespace tessera::detail
