// DOC devices-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/node_graph.hpp>

#include <algorithm>
#include <cstdio>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  // With no accelerator the host's streams run the work in place, so the same graph runs anywhere.
  tessera::Device& device = devices.num_accelerators() > 0 ? devices.accelerator(0) : devices.host();
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  const std::size_t n = 4096, space = memory.space_of(device);
  tessera::Buffer x(memory, 64, n / 64 * sizeof(float), "x");  // 64 rows of 64 floats

  tessera::NodeGraph g("double");
  auto& fill = g.emplace([&] {
    auto* h = static_cast<float*>(x.request(tessera::Access::write).get());
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<float>(i);
    x.release();
  });
  // A device node only enqueues its work: no worker waits for the device.
  auto& twice = g.emplace_on(device.compute_stream(0), [&](tessera::Stream& s) {
    auto* d = static_cast<float*>(x.prepare(space, s, tessera::Access::read_write));  // copies in first
    s.enqueue_host([d, n] { std::for_each(d, d + n, [](float& v) { v *= 2.0f; }); }, "twice");
    x.finish(space, s, tessera::Access::read_write);
  });
  std::size_t wrong = 0;
  auto& check = g.emplace([&] {  // a CPU successor runs once the device work has run
    const auto* h = static_cast<const float*>(x.request(tessera::Access::read).get());  // copies back
    for (std::size_t i = 0; i < n; ++i) wrong += h[i] != 2.0f * static_cast<float>(i);
    x.release();
  });
  fill.precede(twice);
  twice.precede(check);
  executor.run(g).get();
  std::printf("devices: %zu floats doubled on %s, %zu wrong\n", n, device.name().c_str(), wrong);
  return wrong == 0 ? 0 : 1;
}
// DOC devices-page end
