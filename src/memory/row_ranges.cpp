#include <tessera/core/error.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <algorithm>

namespace tessera {

namespace {

void check(RowRange r, const char* operation) {
  if (r.begin > r.end)
    throw Error(std::string("RowRanges::") + operation + ": the range [" + std::to_string(r.begin) + "," +
                std::to_string(r.end) + ") ends before it begins; pass {begin, end} with begin <= end");
}

// The first interval that ends after `row` (ends are increasing, as the intervals are sorted
// and disjoint), i.e. the first that can hold a row at or after `row`.
std::vector<RowRange>::const_iterator first_ending_after(const std::vector<RowRange>& v, std::size_t row) {
  return std::upper_bound(v.begin(), v.end(), row, [](std::size_t x, const RowRange& r) { return x < r.end; });
}

}  // namespace

std::string RowRange::to_string() const { return "[" + std::to_string(begin) + "," + std::to_string(end) + ")"; }

void RowRanges::add(RowRange r) {
  check(r, "add");
  if (r.empty()) return;
  // Intervals that overlap or touch r merge with it: those ending at or after r.begin and
  // beginning at or before r.end.
  auto lo = std::lower_bound(ranges_.begin(), ranges_.end(), r.begin,
                             [](const RowRange& x, std::size_t b) { return x.end < b; });
  auto hi = std::upper_bound(lo, ranges_.end(), r.end, [](std::size_t e, const RowRange& x) { return e < x.begin; });
  if (lo != hi) {
    r.begin = std::min(r.begin, lo->begin);
    r.end = std::max(r.end, std::prev(hi)->end);
    lo = ranges_.erase(lo, hi);
  }
  ranges_.insert(lo, r);
}

void RowRanges::add(const RowRanges& other) {
  for (RowRange r : other) add(r);
}

void RowRanges::subtract(RowRange r) {
  check(r, "subtract");
  if (r.empty()) return;
  auto lo = std::upper_bound(ranges_.begin(), ranges_.end(), r.begin,
                             [](std::size_t b, const RowRange& x) { return b < x.end; });
  auto hi = std::lower_bound(lo, ranges_.end(), r.end, [](const RowRange& x, std::size_t e) { return x.begin < e; });
  if (lo == hi) return;
  const RowRange left{lo->begin, r.begin}, right{r.end, std::prev(hi)->end};
  auto at = ranges_.erase(lo, hi);
  if (!right.empty()) at = ranges_.insert(at, right);
  if (!left.empty()) ranges_.insert(at, left);
}

void RowRanges::subtract(const RowRanges& other) {
  for (RowRange r : other) subtract(r);
}

bool RowRanges::contains(RowRange r) const {
  check(r, "contains");
  if (r.empty()) return true;
  auto it = first_ending_after(ranges_, r.begin);
  return it != ranges_.end() && it->begin <= r.begin && r.end <= it->end;
}

bool RowRanges::overlaps(RowRange r) const {
  check(r, "overlaps");
  if (r.empty()) return false;
  auto it = first_ending_after(ranges_, r.begin);
  return it != ranges_.end() && it->begin < r.end;
}

RowRanges RowRanges::missing(RowRange r) const {
  check(r, "missing");
  RowRanges out;
  std::size_t next = r.begin;
  for (auto it = first_ending_after(ranges_, r.begin); it != ranges_.end() && it->begin < r.end; ++it) {
    if (it->begin > next) out.ranges_.push_back({next, it->begin});
    next = std::max(next, it->end);
  }
  if (next < r.end) out.ranges_.push_back({next, r.end});
  return out;
}

RowRanges RowRanges::intersection(RowRange r) const {
  check(r, "intersection");
  RowRanges out;
  if (r.empty()) return out;
  for (auto it = first_ending_after(ranges_, r.begin); it != ranges_.end() && it->begin < r.end; ++it)
    out.ranges_.push_back({std::max(it->begin, r.begin), std::min(it->end, r.end)});
  return out;
}

std::size_t RowRanges::row_count() const noexcept {
  std::size_t n = 0;
  for (RowRange r : ranges_) n += r.size();
  return n;
}

std::string RowRanges::to_string() const {
  std::string out = "{";
  for (std::size_t i = 0; i < ranges_.size(); ++i) out += (i ? ", " : "") + ranges_[i].to_string();
  return out + "}";
}

}  // namespace tessera
