// Per-node overhead of a graph built once and run many times: tessera vs a sequential loop
// over the same callables vs oneTBB flow::graph.
#include "shapes.hpp"

#include "common/report.hpp"

#include <tessera/sched/executor.hpp>

#include <functional>

#if defined(TESSERA_BENCH_TBB)
#include <oneapi/tbb/flow_graph.h>
#endif

namespace tessera::bench {

namespace {

double tessera_ns_per_node(Executor& ex, Shape shape, int runs, int reps) {
  const std::size_t n = shape_size(shape);
  Slots slots(n);
  NodeGraph g(shape_name(shape));
  std::vector<Node*> nodes(n);
  for (std::size_t i = 0; i < n; ++i) nodes[i] = &g.emplace([&slots, i] { slots.touch(i); });
  for (auto [a, b] : shape_edges(shape, n)) nodes[a]->precede(*nodes[b]);
  double s = median_seconds([&] { ex.run_n(g, static_cast<std::size_t>(runs)).get(); }, reps);
  return s * 1e9 / (static_cast<double>(runs) * static_cast<double>(n));
}

double sequential_ns_per_node(Shape shape, int runs, int reps) {
  const std::size_t n = shape_size(shape);
  Slots slots(n);
  std::vector<std::function<void()>> work(n);
  for (std::size_t i = 0; i < n; ++i) work[i] = [&slots, i] { slots.touch(i); };
  // A topological order of every shape: the tree runs leaves (high indices) first.
  double s = median_seconds(
      [&] {
        for (int r = 0; r < runs; ++r) {
          if (shape == Shape::tree)
            for (std::size_t i = n; i-- > 0;) work[i]();
          else
            for (auto& w : work) w();
        }
      },
      reps);
  return s * 1e9 / (static_cast<double>(runs) * static_cast<double>(n));
}

#if defined(TESSERA_BENCH_TBB)
// oneTBB with its default thread count (one per hardware thread, the caller included).
double tbb_ns_per_node(Shape shape, int runs, int reps) {
  namespace flow = oneapi::tbb::flow;
  const std::size_t n = shape_size(shape);
  Slots slots(n);
  flow::graph g;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;
  nodes.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    nodes.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(
        g, [&slots, i](const flow::continue_msg&) { slots.touch(i); }));
  std::vector<bool> has_pred(n, false);
  for (auto [a, b] : shape_edges(shape, n)) {
    flow::make_edge(*nodes[a], *nodes[b]);
    has_pred[b] = true;
  }
  std::vector<flow::continue_node<flow::continue_msg>*> sources;
  for (std::size_t i = 0; i < n; ++i)
    if (!has_pred[i]) sources.push_back(nodes[i].get());
  double s = median_seconds(
      [&] {
        for (int r = 0; r < runs; ++r) {
          for (auto* src : sources) src->try_put(flow::continue_msg());
          g.wait_for_all();
        }
      },
      reps);
  return s * 1e9 / (static_cast<double>(runs) * static_cast<double>(n));
}
#endif

}  // namespace

void run_graph_benchmarks(Report& report, bool quick) {
  Executor ex;
  const int reps = quick ? 3 : 7;
  for (Shape shape : {Shape::chain, Shape::independent, Shape::tree}) {
    const int runs = shape == Shape::tree ? (quick ? 100 : 1000) : (quick ? 2 : 10);
    const double seq = sequential_ns_per_node(shape, runs, reps);
    report.add({shape_name(shape), "sequential-loop", "per-node", seq, "ns", "", 0, 0});
    const double ours = tessera_ns_per_node(ex, shape, runs, reps);
#if defined(TESSERA_BENCH_TBB)
    const double tbb = tbb_ns_per_node(shape, runs, reps);
    report.add({shape_name(shape), "tbb-flow-graph", "per-node", tbb, "ns", "sequential-loop", seq, 0});
    report.add({shape_name(shape), "tessera", "per-node", ours, "ns", "tbb-flow-graph", tbb, 0});
#endif
    report.add({shape_name(shape), "tessera", "per-node", ours, "ns", "sequential-loop", seq, 0});
  }
}

}  // namespace tessera::bench
