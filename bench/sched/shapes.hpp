#pragma once
// The three graph shapes of the sched suite, built once per library and run many times.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::bench {

enum class Shape { chain, independent, tree };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::chain: return "chain-100000";
    case Shape::independent: return "independent-100000";
    case Shape::tree: return "tree-2047";
  }
  return "?";
}

inline std::size_t shape_size(Shape s) { return s == Shape::tree ? 2047 : 100000; }

/// Edges (from, to) of a shape with n nodes. The tree is a binary reduction: leaves n/2..n-1
/// feed their parents, the root (0) finishes last.
inline std::vector<std::pair<std::size_t, std::size_t>> shape_edges(Shape s, std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> e;
  if (s == Shape::chain)
    for (std::size_t i = 1; i < n; ++i) e.emplace_back(i - 1, i);
  if (s == Shape::tree)
    for (std::size_t i = 1; i < n; ++i) e.emplace_back(i, (i - 1) / 2);
  return e;
}

/// Trivial work each node does: one store to its own slot (no sharing between nodes).
struct Slots {
  explicit Slots(std::size_t n) : v(n) {}
  void touch(std::size_t i) { v[i] += 1; }
  std::vector<std::uint64_t> v;
};

void run_graph_benchmarks(class Report& report, bool quick);
void run_loop_benchmarks(class Report& report, bool quick);

}  // namespace tessera::bench
