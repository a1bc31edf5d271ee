#pragma once
// The demo's second graph: CPU nodes and device nodes sharing tiles through Buffers, so the
// runtime's copies (host -> device, device -> host) overlap the device kernels.

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <string>

namespace demo {

struct PipelineResult {
  std::size_t tiles = 0;
  std::size_t nodes = 0;
  double seconds = 0;
  double max_error = 0;  ///< against the same arithmetic done sequentially on the host
  std::size_t bytes_to_devices = 0, bytes_to_host = 0;
  std::size_t trace_slices = 0;
};

/// Runs `runs` times a graph of `tiles` tiles of `tile_elements` floats: fill (CPU) -> kernel
/// (device node, tiles dealt round robin over the accelerators and their compute streams) ->
/// check (CPU), writing the trace to `trace_path` and the graph to `dot_path`.
PipelineResult run_device_pipeline(tessera::DeviceSet& devices, tessera::Executor& ex, std::size_t tiles,
                                   std::size_t tile_elements, std::size_t runs, const std::string& trace_path,
                                   const std::string& dot_path);

}  // namespace demo
