#pragma once
// The parts of SUITE=flow; each times tessera and its baseline in the same run and adds records.

#include "common/report.hpp"

namespace flow_bench {

struct Options {
  bool quick = false;
};

/// Per-firing overhead: a chain and a wide fan-out of trivial operations, against oneTBB's
/// flow graph (function_node) on the same topology.
void overhead(tessera::bench::Report& report, const Options& o);
/// Monte Carlo option pricing (apps/flow-options) against a hand-written OpenMP pricer of the
/// same paths; one against two simulated devices.
void options(tessera::bench::Report& report, const Options& o);
/// One MLP training epoch (apps/flow-mlp) fused and unfused, against a hand-written loop of the
/// same OpenBLAS calls.
void mlp(tessera::bench::Report& report, const Options& o);

}  // namespace flow_bench
