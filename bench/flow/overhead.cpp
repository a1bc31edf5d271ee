// Per-firing overhead of trivial operations: a chain (each value passes K operations in turn) and
// a wide fan-out (each value fans out to W operations), against oneTBB's flow graph with
// function_nodes of unlimited concurrency on the same topology, in the same run.
#include "suites.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>
#include <tessera/sched/executor.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#if defined(TESSERA_BENCH_TBB)
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#endif

namespace flow_bench {
namespace {

namespace flow = tessera::flow;
using tessera::bench::Record;

struct Increment : flow::Operation {
  flow::InputPort<long> input{*this, "input"};
  flow::OutputPort<long> output{*this, "output"};
  Increment() : Operation("increment") {}
  void fire(flow::Context& c) override { c.emit(output, c.get(input) + 1); }
};

// Times `values` values through the topology; returns ns per firing.
double tessera_chain(std::size_t length, std::size_t values, bool wide, int reps) {
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  std::vector<Increment*> ops;
  Increment& head = f.add<Increment>();
  std::atomic<long> sink{0};
  for (std::size_t i = 0; i < length; ++i) {
    Increment& op = f.add<Increment>();
    flow::connect(wide ? head.output : ops.empty() ? head.output : ops.back()->output, op.input);
    ops.push_back(&op);
    if (wide) f.on_receive(op.output, [&](long v) { sink.fetch_add(v, std::memory_order_relaxed); });
  }
  if (!wide) f.on_receive(ops.back()->output, [&](long v) { sink.fetch_add(v, std::memory_order_relaxed); });
  const double s = tessera::bench::median_seconds(
      [&] {
        for (std::size_t v = 0; v < values; ++v) f.send(head.input, static_cast<long>(v));
        f.wait();
      },
      reps);
  return s * 1e9 / static_cast<double>(values * (length + 1));
}

#if defined(TESSERA_BENCH_TBB)
double tbb_chain(std::size_t length, std::size_t values, bool wide, int reps) {
  namespace tf = tbb::flow;
  tf::graph g;
  auto inc = [](long v) { return v + 1; };
  tf::function_node<long, long> head(g, tf::unlimited, inc);
  std::vector<std::unique_ptr<tf::function_node<long, long>>> nodes;
  std::atomic<long> sink{0};
  tf::function_node<long, tf::continue_msg> collect(g, tf::unlimited, [&](long v) {
    sink.fetch_add(v, std::memory_order_relaxed);
    return tf::continue_msg();
  });
  for (std::size_t i = 0; i < length; ++i) {
    nodes.push_back(std::make_unique<tf::function_node<long, long>>(g, tf::unlimited, inc));
    tf::make_edge(wide || nodes.size() == 1 ? head : *nodes[nodes.size() - 2], *nodes.back());
    if (wide) tf::make_edge(*nodes.back(), collect);
  }
  if (!wide) tf::make_edge(*nodes.back(), collect);
  const double s = tessera::bench::median_seconds(
      [&] {
        for (std::size_t v = 0; v < values; ++v) head.try_put(static_cast<long>(v));
        g.wait_for_all();
      },
      reps);
  return s * 1e9 / static_cast<double>(values * (length + 1));
}
#endif

}  // namespace

void overhead(tessera::bench::Report& report, const Options& o) {
  const std::size_t length = o.quick ? 100 : 1000, values = o.quick ? 20 : 200;
  const int reps = o.quick ? 3 : 7;
  for (const bool wide : {false, true}) {
    const std::string name = std::string(wide ? "fan-out-" : "chain-") + std::to_string(length);
    const double t = tessera_chain(length, values, wide, reps);
#if defined(TESSERA_BENCH_TBB)
    const double b = tbb_chain(length, values, wide, reps);
    report.add(Record{name, "tessera flow", "per-firing", t, "ns", "tbb function_node", b});
#else
    report.add(Record{name, "tessera flow", "per-firing", t, "ns", "", 0});
#endif
  }
}

}  // namespace flow_bench
