#include "device_pipeline.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/buffer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <mutex>
#include <vector>

namespace demo {

namespace {

// The "kernel": a few damped oscillator steps per element, enough work that a tile's compute
// takes about as long as its copies, so their overlap shows in the trace.
constexpr int kSteps = 8;

float initial(std::size_t tile, std::size_t i) { return std::sin(0.01f * static_cast<float>(tile * 131 + i)); }

float evolve(float x) {
  float v = 0.0f;
  for (int s = 0; s < kSteps; ++s) {
    v = 0.99f * v - 0.05f * x;
    x = x + 0.05f * v;
  }
  return x;
}

}  // namespace

PipelineResult run_device_pipeline(tessera::DeviceSet& devices, tessera::Executor& ex, std::size_t tiles,
                                   std::size_t tile_elements, std::size_t runs, const std::string& trace_path,
                                   const std::string& dot_path) {
  tessera::MemoryManager memory(devices);
  // A tile is one Buffer of one row per 1024 floats: validity and copies work in rows.
  const std::size_t row = 1024, rows = (tile_elements + row - 1) / row, n = rows * row;
  std::vector<tessera::Buffer> tile;
  for (std::size_t t = 0; t < tiles; ++t)
    tile.emplace_back(memory, rows, row * sizeof(float), "tile[" + std::to_string(t) + "]");

  std::mutex error_mutex;
  double max_error = 0.0;
  tessera::NodeGraph g("device-pipeline");
  auto& report = g.emplace([] {}).name("done");
  const std::size_t accelerators = devices.num_accelerators();
  for (std::size_t t = 0; t < tiles; ++t) {
    // No accelerator: the host's streams run the kernels in place (GPU-kind work on the host).
    tessera::Device& d = accelerators == 0 ? devices.host() : devices.accelerator(t % accelerators);
    const std::size_t space = memory.space_of(d);
    tessera::Stream& s = d.compute_stream((t / std::max<std::size_t>(accelerators, 1)) % d.num_compute_streams());
    tessera::Buffer& b = tile[t];

    auto& fill = g.emplace([&b, t, n] {
      auto* h = static_cast<float*>(b.request(tessera::Access::write).get());
      for (std::size_t i = 0; i < n; ++i) h[i] = initial(t, i);
      b.release();
    }).name("fill[" + std::to_string(t) + "]");
    auto& kernel = g.emplace_on(s, [&b, space, n](tessera::Stream& st) {
      auto* x = static_cast<float*>(b.prepare(space, st, tessera::Access::read_write));  // copies in
      st.enqueue_host([x, n] { std::transform(x, x + n, x, evolve); }, "evolve");
      b.finish(space, st, tessera::Access::read_write);
    }).name("kernel[" + std::to_string(t) + "]");
    auto& check = g.emplace([&, t, n] {
      const auto* h = static_cast<const float*>(b.request(tessera::Access::read).get());  // copies out
      double worst = 0.0;
      for (std::size_t i = 0; i < n; ++i)
        worst = std::max(worst, static_cast<double>(std::abs(h[i] - evolve(initial(t, i)))));
      b.release();
      std::lock_guard lock(error_mutex);
      max_error = std::max(max_error, worst);
    }).name("check[" + std::to_string(t) + "]");
    fill.precede(kernel);
    kernel.precede(check);
    check.precede(report);
  }

  ex.run(g).get();  // warm-up: replicas are allocated once, then reused
  const auto before = memory.stats().transferred;
  ex.start_trace();
  const auto t0 = std::chrono::steady_clock::now();
  ex.run_n(g, runs).get();
  PipelineResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tessera::Trace trace = ex.stop_trace();
  trace.save(trace_path);
  std::ofstream(dot_path) << g.to_dot();
  const auto after = memory.stats().transferred;
  r.tiles = tiles;
  r.nodes = g.size();
  r.max_error = max_error;
  r.bytes_to_devices = after.host_to_device - before.host_to_device;
  r.bytes_to_host = after.device_to_host - before.device_to_host;
  r.trace_slices = trace.events.size();
  return r;
}

}  // namespace demo
