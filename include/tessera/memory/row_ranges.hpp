#pragma once
// Row ranges: which rows (indices along a buffer's outermost dimension) a replica holds valid,
// an access touches, or a copy moves. Sub-range validity is what lets a partial access copy
// only the rows it lacks, and what the hybrid CPU/GPU scheduler reads as dirty regions.

#include <cstddef>
#include <string>
#include <vector>

namespace tessera {

/// The half-open row interval [begin, end).
///
///   tessera::RowRange halo{0, 2};      // rows 0 and 1
///   std::size_t n = halo.size();       // 2
struct RowRange {
  std::size_t begin = 0;
  std::size_t end = 0;

  constexpr std::size_t size() const noexcept { return end > begin ? end - begin : 0; }
  constexpr bool empty() const noexcept { return end <= begin; }
  /// Whether the two share at least one row.
  constexpr bool overlaps(RowRange o) const noexcept {
    return begin < o.end && o.begin < end && !empty() && !o.empty();
  }
  /// Whether every row of `o` is in this range (an empty `o` always is).
  constexpr bool contains(RowRange o) const noexcept { return o.empty() || (begin <= o.begin && o.end <= end); }
  constexpr bool operator==(const RowRange&) const noexcept = default;
  /// "[3,7)".
  std::string to_string() const;
};

/// A set of rows kept as sorted, disjoint, non-adjacent half-open intervals, so a set is one
/// interval per contiguous run and equality is structural.
///
///   tessera::RowRanges valid;
///   valid.add({0, 10});
///   valid.subtract({4, 6});                    // {[0,4), [6,10)}
///   tessera::RowRanges gap = valid.missing({2, 8});  // {[4,6)}: what a read of [2,8) must copy
///   for (tessera::RowRange r : gap) copy_rows(r);
///
/// A range with begin > end is a bug in the caller: every member taking one throws
/// tessera::Error naming it. Empty ranges are accepted and change nothing.
class RowRanges {
 public:
  using const_iterator = std::vector<RowRange>::const_iterator;

  RowRanges() = default;
  /// The set holding exactly `r`.
  ///
  ///   tessera::RowRanges all(tessera::RowRange{0, rows});
  explicit RowRanges(RowRange r) { add(r); }

  /// Adds the rows of `r`, merging with touching intervals.
  ///
  ///   s.add({0, 4}); s.add({4, 6});   // {[0,6)}
  void add(RowRange r);
  void add(const RowRanges& other);
  /// Removes the rows of `r`, splitting an interval that `r` falls inside.
  ///
  ///   s.subtract({2, 3});             // {[0,2), [3,6)}
  void subtract(RowRange r);
  void subtract(const RowRanges& other);
  void clear() noexcept { ranges_.clear(); }

  /// Whether every row of `r` is in the set (an empty `r` always is).
  ///
  ///   if (replica_valid.contains(rows)) { /* no copy needed */ }
  bool contains(RowRange r) const;
  /// Whether some row of `r` is in the set.
  bool overlaps(RowRange r) const;
  /// The rows of `r` that are not in the set, as intervals.
  ///
  ///   for (tessera::RowRange run : valid.missing(rows)) copy(run);
  RowRanges missing(RowRange r) const;
  /// The rows of `r` that are in the set.
  ///
  ///   RowRanges from_here = source_valid.intersection(run);
  RowRanges intersection(RowRange r) const;

  bool empty() const noexcept { return ranges_.empty(); }
  /// The number of intervals (contiguous runs), not of rows.
  std::size_t size() const noexcept { return ranges_.size(); }
  /// The number of rows in the set.
  std::size_t row_count() const noexcept;
  const_iterator begin() const noexcept { return ranges_.begin(); }
  const_iterator end() const noexcept { return ranges_.end(); }
  bool operator==(const RowRanges&) const = default;
  /// "{[0,4), [6,10)}", or "{}".
  std::string to_string() const;

 private:
  std::vector<RowRange> ranges_;  // sorted by begin; disjoint, never touching, never empty
};

}  // namespace tessera
