#pragma once
// AccessLog and AccessOrder: where declared accesses become dependencies. A front end declares,
// for each piece of work it submits, the Buffers (and rows) the work reads, writes, read-writes
// or reduces into; the log answers which earlier work it must follow. The task runtime keeps a
// log per object, the Graph an AccessOrder per pass; new front ends use the same two classes.
//
// The rules are those of sequential consistency: a reader follows the last writer of the rows
// it reads (read after write); a writer follows the readers since that writer, or the writer
// itself when there were none (write after read, write after write). Readers of the same rows
// do not follow each other, so they may run concurrently. Reduce orders as read_write: two
// reductions into one buffer would otherwise be two writers in flight, which the Buffer refuses.

#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera {

/// Why a later access must follow an earlier one.
enum class Hazard : std::uint8_t {
  read_after_write,   ///< it reads values the earlier access wrote (a failure there spoils them)
  write_after_read,   ///< it would change values the earlier access still reads
  write_after_write,  ///< it would be overwritten by the earlier access landing late
};

/// A token whose work may be known to be over: an AccessLog then drops it from long reader
/// lists, since nothing needs to follow it any more (found by ADL, e.g. for a task handle).
template <typename Token>
concept CompletableToken = requires(const Token& t) {
  { access_done(t) } -> std::convertible_to<bool>;
};

/// The accesses declared so far to one Buffer, reduced to what later accesses must follow: per
/// row segment, the last writer and the readers since. `Token` names the work (a task handle, a
/// graph node): copyable and equality-comparable; the log keeps copies of the tokens it still
/// needs, and destroys them once superseded. Not thread safe: the caller serialises declare and
/// forget (a lock per object, or one thread building a graph).
///
///   tessera::AccessLog<int> log;
///   log.declare(1, tessera::Access::write, {0, 10}, on_dep);  // no dependency
///   log.declare(2, tessera::Access::read, {0, 5}, on_dep);    // on_dep(1, read_after_write)
///   log.declare(3, tessera::Access::read, {5, 10}, on_dep);   // on_dep(1, read_after_write)
///   log.declare(4, tessera::Access::write, {4, 6}, on_dep);   // on_dep(2, ...), on_dep(3, write_after_read)
template <typename Token>
class AccessLog {
 public:
  /// Records that `who` accesses `rows` in `mode`, after everything declared before, and calls
  /// `on_dependency(const Token& earlier, Hazard)` once for each earlier access it must follow
  /// (once per token, with read_after_write where one of several reasons is that).
  template <typename OnDependency>
  void declare(Token who, Access mode, RowRange rows, OnDependency&& on_dependency) {
    if (rows.empty()) return;
    // The common case of whole-object accesses (tasks): one segment, exactly these rows, kept
    // (with its reader list's capacity) even when forget empties it. Nothing is allocated.
    if (segments_.empty()) segments_.push_back(Segment{rows, std::nullopt, {}, first_prune_});
    if (segments_.size() == 1 && segments_.front().rows == rows) {
      apply(segments_.front(), std::move(who), mode, on_dependency);
      return;
    }
    found_.clear();
    auto collect = [this](const Token& earlier, Hazard h) {
      for (auto& [token, hazard] : found_)
        if (token == earlier) {
          if (h == Hazard::read_after_write) hazard = h;
          return;
        }
      found_.emplace_back(earlier, h);
    };
    std::vector<Segment>& out = spare_;
    out.clear();
    out.reserve(segments_.size() + 2);
    std::size_t next = rows.begin;  // the first row of `rows` not yet given a segment
    auto fill_to = [&](std::size_t end) {
      if (next >= end) return;
      Segment gap{{next, end}, std::nullopt, {}, first_prune_};
      apply(gap, who, mode, collect);
      out.push_back(std::move(gap));
      next = end;
    };
    for (Segment& s : segments_) {
      if (s.rows.end <= rows.begin) {
        out.push_back(std::move(s));
        continue;
      }
      if (s.rows.begin >= rows.end) {
        fill_to(rows.end);
        out.push_back(std::move(s));
        continue;
      }
      if (s.rows.begin < rows.begin) out.push_back(piece(s, {s.rows.begin, rows.begin}));
      fill_to(std::max(s.rows.begin, rows.begin));
      Segment middle = piece(s, {std::max(s.rows.begin, rows.begin), std::min(s.rows.end, rows.end)});
      apply(middle, who, mode, collect);
      next = middle.rows.end;
      out.push_back(std::move(middle));
      if (s.rows.end > rows.end) out.push_back(piece(s, {rows.end, s.rows.end}));
    }
    fill_to(rows.end);
    merge(out);
    std::swap(segments_, spare_);
    spare_.clear();
    for (const auto& [token, hazard] : found_) on_dependency(token, hazard);
    found_.clear();
  }

  /// Drops `who` where it is the last writer or the newest reader of a segment: work known to
  /// have finished well, that later work need not follow. Returns whether it was found.
  bool forget(const Token& who) {
    bool found = false;
    for (Segment& s : segments_) {
      if (s.writer && *s.writer == who) {
        s.writer.reset();
        found = true;
      }
      // The newest reader only: a long run of readers (a constant every task reads) would make
      // a search per completion quadratic; pruning drops the others.
      if (!s.readers.empty() && s.readers.back() == who) {
        s.readers.pop_back();
        found = true;
      }
    }
    if (segments_.size() > 1) std::erase_if(segments_, [](const Segment& s) { return s.idle(); });
    return found;
  }

  /// Forgets everything: later accesses follow nothing declared before.
  void clear() { segments_.clear(); }
  /// Whether no access is remembered.
  bool empty() const noexcept {
    return std::all_of(segments_.begin(), segments_.end(), [](const Segment& s) { return s.idle(); });
  }
  /// Row segments with distinct histories (a measure of fragmentation, for tests).
  std::size_t num_segments() const noexcept { return segments_.size(); }

 private:
  struct Segment {
    RowRange rows;
    std::optional<Token> writer;
    std::vector<Token> readers;
    std::size_t prune_at;
    bool idle() const noexcept { return !writer && readers.empty(); }
  };
  static constexpr std::size_t first_prune_ = 32;

  static Segment piece(const Segment& s, RowRange rows) { return Segment{rows, s.writer, s.readers, s.prune_at}; }

  template <typename T, typename OnDependency>
  static void apply(Segment& s, T&& who, Access mode, OnDependency& on_dependency) {
    if (!access_writes(mode)) {
      if (s.writer) on_dependency(*s.writer, Hazard::read_after_write);
      s.readers.push_back(std::forward<T>(who));
      if (s.readers.size() >= s.prune_at) prune(s);
      return;
    }
    if (s.writer && (s.readers.empty() || access_reads(mode)))
      on_dependency(*s.writer, access_reads(mode) ? Hazard::read_after_write : Hazard::write_after_write);
    for (const Token& r : s.readers) on_dependency(r, Hazard::write_after_read);
    s.readers.clear();
    s.prune_at = first_prune_;
    s.writer = std::forward<T>(who);
  }

  // Finished readers need no edge any more; dropped once the list has doubled, so a long run of
  // readers without a writer keeps a short list.
  static void prune(Segment& s) {
    if constexpr (CompletableToken<Token>) std::erase_if(s.readers, [](const Token& r) { return access_done(r); });
    s.prune_at = std::max<std::size_t>(first_prune_, 2 * s.readers.size());
  }

  // Neighbours with the same history become one segment again (a write over many segments
  // leaves them all alike).
  static void merge(std::vector<Segment>& v) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (kept > 0) {
        Segment& last = v[kept - 1];
        if (last.rows.end == v[i].rows.begin && last.writer == v[i].writer && last.readers == v[i].readers) {
          last.rows.end = v[i].rows.end;
          continue;
        }
      }
      if (kept != i) v[kept] = std::move(v[i]);
      ++kept;
    }
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(kept), v.end());
  }

  std::vector<Segment> segments_;  // disjoint, in row order
  std::vector<Segment> spare_;     // the next segments_, built beside it; kept for its capacity
  std::vector<std::pair<Token, Hazard>> found_;
};

/// An AccessLog per Buffer, for work that touches several (a graph node on a tensor block and
/// its neighbours, a loop over many datasets).
///
///   tessera::AccessOrder<Node*> order;
///   order.declare(&n, u.buffer(b), tessera::Access::read, u.buffer(b).all(),
///                 [&](Node* earlier, tessera::Hazard) { earlier->precede(n); });
template <typename Token>
class AccessOrder {
 public:
  template <typename OnDependency>
  void declare(const Token& who, const Buffer& buffer, Access mode, RowRange rows, OnDependency&& on_dependency) {
    logs_[buffer.key()].declare(who, mode, rows, on_dependency);
  }
  template <typename OnDependency>
  void declare(const Token& who, const Buffer& buffer, Access mode, OnDependency&& on_dependency) {
    declare(who, buffer, mode, buffer.all(), on_dependency);
  }
  void clear() { logs_.clear(); }

 private:
  std::unordered_map<const void*, AccessLog<Token>> logs_;
};

}  // namespace tessera
