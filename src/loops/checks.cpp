// The loops front end's checks: every bad block, shape, stencil, range or argument is a
// tessera::Error naming the loop and the dataset.
#include <tessera/core/error.hpp>
#include <tessera/loops/dataset.hpp>
#include <tessera/loops/par_loop.hpp>

#include <algorithm>
#include <string>

namespace tessera::loops {

namespace {

std::string offset_text(int dims, const Offset& o) {
  std::string s = "(";
  for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + std::to_string(o[d]);
  return s + ")";
}

}  // namespace

Stencil::Stencil(int dims, std::vector<Offset> points, std::string name)
    : dims_(dims), points_(std::move(points)), name_(std::move(name)) {
  if (dims < 1 || dims > 3)
    throw Error("Stencil '" + name_ + "': " + std::to_string(dims) + " dimensions; a stencil has 1, 2 or 3");
  if (points_.empty()) throw Error("Stencil '" + name_ + "' has no points; give at least the site, {0, 0}");
  for (const Offset& p : points_)
    for (int d = dims; d < 3; ++d)
      if (p[d] != 0)
        throw Error("Stencil '" + name_ + "' has " + std::to_string(dims) + " dimensions but point " +
                    offset_text(3, p) + " reaches into dimension " + std::to_string(d));
  for (int d = 0; d < 3; ++d) {
    low_[d] = high_[d] = points_[0][d];
    for (const Offset& p : points_) {
      low_[d] = std::min(low_[d], p[d]);
      high_[d] = std::max(high_[d], p[d]);
    }
  }
}

bool Stencil::contains(const Offset& o) const noexcept {
  return std::find(points_.begin(), points_.end(), o) != points_.end();
}

StridedStencil::StridedStencil(Stencil points, Offset stride, bool divide)
    : points_(std::move(points)), stride_(stride), divide_(divide) {
  for (int d = 0; d < 3; ++d) {
    if (d >= points_.dims()) {
      stride_[d] = 1;  // dimensions beyond the stencil's map as themselves
      continue;
    }
    if (divide ? stride_[d] < 1 : stride_[d] < 0)
      throw Error("StridedStencil '" + points_.name() + "': stride " + std::to_string(stride_[d]) + " in dimension " +
                  std::to_string(d) + (divide ? "; a prolongation stride is 1 or more" : "; a stride is 0 or more"));
  }
}

StridedStencil StridedStencil::strided(Stencil points, Offset stride) { return {std::move(points), stride, false}; }
StridedStencil StridedStencil::prolong(Stencil points, Offset stride) { return {std::move(points), stride, true}; }

Range Range::of(int dims, std::initializer_list<int> bounds) {
  if (dims < 1 || dims > 3 || bounds.size() != std::size_t(2 * dims))
    throw Error("Range::of: " + std::to_string(bounds.size()) + " bounds for " + std::to_string(dims) +
                " dimensions; give begin and end per dimension, {x0, x1, y0, y1, ...}");
  Range r;
  auto it = bounds.begin();
  for (int d = 0; d < dims; ++d) {
    r.begin[d] = *it++;
    r.end[d] = *it++;
  }
  return r;
}

Block::Block(Context& context, int dims, std::string name) : context_(&context), dims_(dims), name_(std::move(name)) {
  if (dims < 1 || dims > 3)
    throw Error("Block '" + name_ + "': " + std::to_string(dims) + " dimensions; a block has 1, 2 or 3");
}

namespace detail {

void throw_record_on_1d(const std::string& dataset) {
  throw Error("Dataset '" + dataset +
              "': a Record dataset needs a block of 2 or 3 dimensions (its layout lays sites out along x within a "
              "row of the outermost dimension); on a 1-D block use one Dataset per member");
}

const Shape& checked_shape(const std::string& dataset, int dims, const Shape& s) {
  for (int d = 0; d < 3; ++d) {
    const std::string where = "Dataset '" + dataset + "', dimension " + std::to_string(d) + ": ";
    if (d >= dims) {
      if (s.size[d] != 1 || s.d_m[d] != 0 || s.d_p[d] != 0)
        throw Error(where + "the block has " + std::to_string(dims) +
                    " dimensions; leave size 1 and no halo in the dimensions beyond");
      continue;
    }
    if (s.size[d] < 1) throw Error(where + "size " + std::to_string(s.size[d]) + "; give at least 1");
    if (s.d_m[d] > 0 || s.d_p[d] < 0)
      throw Error(where + "halo depths d_m " + std::to_string(s.d_m[d]) + ", d_p " + std::to_string(s.d_p[d]) +
                  "; d_m is zero or negative and d_p zero or positive, as in OPS");
  }
  return s;
}

Range checked_range(const std::string& loop, const Block& block, const Range& range) {
  Range r = range;
  for (int d = block.dims(); d < 3; ++d) {
    r.begin[d] = 0;
    r.end[d] = 1;
  }
  for (int d = 0; d < block.dims(); ++d)
    if (r.begin[d] > r.end[d])
      throw Error("par_loop '" + loop + "': range in dimension " + std::to_string(d) + " is [" +
                  std::to_string(r.begin[d]) + ", " + std::to_string(r.end[d]) + "); give begin <= end");
  return r;
}

void check_dat_arg(const std::string& loop, const Block& block, const Range& range, const Block& dat_block,
                   const std::string& dataset, const Stencil& stencil, bool writes, const std::array<int, 3>& first,
                   const std::array<int, 3>& last) {
  const std::string where = "par_loop '" + loop + "', dataset '" + dataset + "': ";
  if (&dat_block != &block)
    throw Error(where + "declared on block '" + dat_block.name() + "', but the loop runs on block '" + block.name() +
                "'; pass datasets of the loop's block");
  if (stencil.dims() != block.dims())
    throw Error(where + "stencil '" + stencil.name() + "' has " + std::to_string(stencil.dims()) +
                " dimensions, the block " + std::to_string(block.dims()));
  if (writes && (stencil.points().size() != 1 || stencil.points()[0] != Offset{0, 0, 0}))
    throw Error(where + "written through stencil '" + stencil.name() +
                "', which is not the site alone; a loop writes only its own site, use a stencil of {0, 0, 0}");
  for (int d = 0; d < block.dims(); ++d) {
    const int lo = range.begin[d] + stencil.low(d), hi = range.end[d] - 1 + stencil.high(d);
    if (lo < first[d] || hi >= last[d])
      throw Error(where + "the range [" + std::to_string(range.begin[d]) + ", " + std::to_string(range.end[d]) +
                  ") in dimension " + std::to_string(d) + " with stencil '" + stencil.name() + "' (offsets " +
                  std::to_string(stencil.low(d)) + " to " + std::to_string(stencil.high(d)) + ") reaches [" +
                  std::to_string(lo) + ", " + std::to_string(hi + 1) + "), outside the dataset and its halo [" +
                  std::to_string(first[d]) + ", " + std::to_string(last[d]) + ")");
  }
}

void check_strided_arg(const std::string& loop, const Block& block, const Range& range, const Block& dat_block,
                       const std::string& dataset, const StridedStencil& stencil, const std::array<int, 3>& first,
                       const std::array<int, 3>& last) {
  const std::string where = "par_loop '" + loop + "', dataset '" + dataset + "': ";
  if (&dat_block != &block)
    throw Error(where + "declared on block '" + dat_block.name() + "', but the loop runs on block '" + block.name() +
                "'; pass datasets of the loop's block");
  const Stencil& s = stencil.points();
  if (s.dims() != block.dims())
    throw Error(where + "stencil '" + s.name() + "' has " + std::to_string(s.dims()) + " dimensions, the block " +
                std::to_string(block.dims()));
  for (int d = 0; d < block.dims(); ++d) {
    // Both maps are monotone, so the ends of the range map to the ends of the reach.
    const int lo = stencil.map(d, range.begin[d]) + s.low(d), hi = stencil.map(d, range.end[d] - 1) + s.high(d);
    if (lo < first[d] || hi >= last[d])
      throw Error(where + "the range [" + std::to_string(range.begin[d]) + ", " + std::to_string(range.end[d]) +
                  ") in dimension " + std::to_string(d) + " through " +
                  (stencil.divides() ? "prolongation" : "strided") + " stencil '" + s.name() + "' (stride " +
                  std::to_string(stencil.stride()[d]) + ", offsets " + std::to_string(s.low(d)) + " to " +
                  std::to_string(s.high(d)) + ") reaches [" + std::to_string(lo) + ", " + std::to_string(hi + 1) +
                  "), outside the dataset and its halo [" + std::to_string(first[d]) + ", " + std::to_string(last[d]) +
                  ")");
  }
}

void throw_off_stencil(const AccessCheck& c, int dx, int dy, int dz) {
  throw Error("par_loop '" + *c.loop + "', dataset '" + *c.dataset + "': offset " +
              offset_text(c.stencil->dims(), {dx, dy, dz}) + " is not in stencil '" + c.stencil->name() +
              "'; add it to the stencil or read another offset");
}

}  // namespace detail
}  // namespace tessera::loops
