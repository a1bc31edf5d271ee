#pragma once
#include "common/report.hpp"

namespace tessera::bench {
/// Cost of a device node (NodeGraph::emplace_on) against enqueueing the same work on the stream
/// directly, on a simulated device (and on a GPU where the CUDA backend is built and one is present).
void run_device_node_benchmarks(Report& report, bool quick);
}  // namespace tessera::bench
