#include "overlapped_tiles.hpp"

#include <algorithm>
#include <climits>
#include <map>

namespace tessera::loops::detail {
namespace {

// A hull of outermost indices: what is not contiguous is over-approximated, which only makes
// earlier loops compute a few more rows.
struct Span {
  int begin = INT_MAX, end = INT_MIN;
  bool empty() const noexcept { return begin >= end; }
  void add(int b, int e) {
    if (b >= e) return;
    begin = std::min(begin, b);
    end = std::max(end, e);
  }
  /// What is left of the span outside [b, e).
  void remove(int b, int e) {
    if (empty() || b >= e) return;
    Span left;
    left.add(begin, std::min(end, b));
    left.add(std::max(begin, e), end);
    *this = left;
  }
};

}  // namespace

std::optional<OverlappedTile> overlapped_tile(const std::vector<std::unique_ptr<LoopRecord>>& loops, int own_begin,
                                              int own_end) {
  OverlappedTile tile;
  tile.loops.resize(loops.size());
  std::map<const void*, Span> needed;  // per buffer: rows later loops of the tile read
  std::map<const void*, int> first_row;
  for (std::size_t l = loops.size(); l-- > 0;) {
    const LoopRecord& loop = *loops[l];
    const int b = loop.outer_begin(), e = loop.outer_end();
    int tb = std::max(b, own_begin), te = std::min(e, own_end);
    for (const DatUse& u : loop.dats) {
      first_row[u.buffer.key()] = u.first_row;
      if (u.access == Access::read) continue;
      const Span& later = needed[u.buffer.key()];
      if (later.empty()) continue;
      const int xb = std::max(b, std::min(tb, later.begin)), xe = std::min(e, std::max(te, later.end));
      if (loop.reduces && (xb < tb || xe > te)) return std::nullopt;
      tb = xb;
      te = xe;
    }
    if (tb >= te) continue;
    tile.loops[l] = {tb, te};
    for (const DatUse& u : loop.dats)
      if (u.access == Access::write) needed[u.buffer.key()].remove(tb, te);
    for (const DatUse& u : loop.dats)
      if (u.access != Access::write) needed[u.buffer.key()].add(tb + u.low, te + u.high);
  }
  for (const auto& [key, span] : needed)
    if (!span.empty())
      tile.inputs.push_back(
          {key, RowRange{std::size_t(span.begin - first_row[key]), std::size_t(span.end - first_row[key])}});
  return tile;
}

}  // namespace tessera::loops::detail
