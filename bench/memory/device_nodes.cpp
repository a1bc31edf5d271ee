// Device-node overhead: a chain of device nodes on one stream, each enqueueing one empty piece
// of device work, run by the executor, against a bare loop that enqueues the same pieces on the
// same stream and synchronizes once. The difference is what the node layer costs per launch:
// the worker's issue and the event record (a node whose successors are all device nodes needs
// no completion callback). The same chain captured (NodeGraph::capture) replays as one recording.
#include "device_nodes.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <string>

namespace tessera::bench {

namespace {

void measure_stream(Report& report, const std::string& device_name, Stream& stream, std::size_t nodes, int reps) {
  ExecutorOptions options;
  options.num_devices = 1;
  Executor ex(options);
  NodeGraph g("device-chain");
  Node* prev = nullptr;
  for (std::size_t i = 0; i < nodes; ++i) {
    Node& n = g.emplace_on(stream, [](Stream& s) { s.enqueue_host([] {}, {}); });
    if (prev != nullptr) prev->precede(n);
    prev = &n;
  }
  ex.run(g).get();  // warm-up: first-touch of queues and pools
  const double bare = median_seconds(
      [&] {
        for (std::size_t i = 0; i < nodes; ++i) stream.enqueue_host([] {}, {});
        stream.synchronize();
      },
      reps);
  const double through_nodes = median_seconds([&] { ex.run(g).get(); }, reps);
  // Captured: run 1 plain, run 2 records, the timed runs replay the recording.
  g.capture();
  ex.run_n(g, 2).get();
  const double captured = median_seconds([&] { ex.run(g).get(); }, reps);
  const double n = static_cast<double>(nodes);
  const std::string name = "device-node-chain-" + std::to_string(nodes) + "-" + device_name;
  report.add({name, "bare-stream-loop", "per-launch", bare * 1e9 / n, "ns", "", 0, 0});
  report.add({name, "tessera-device-node", "per-launch", through_nodes * 1e9 / n, "ns", "bare-stream-loop", bare * 1e9 / n, 0});
  report.add({name, "tessera-captured-graph", "per-launch", captured * 1e9 / n, "ns", "bare-stream-loop", bare * 1e9 / n, 0});
}

}  // namespace

void run_device_node_benchmarks(Report& report, bool quick) {
  const std::size_t nodes = quick ? 2000 : 20000;
  const int reps = quick ? 3 : 7;
  auto sim = DeviceSet::select("sim:1:64MiB");
  measure_stream(report, "sim", sim.accelerator(0).compute_stream(0), nodes, reps);
}

}  // namespace tessera::bench
