// DOC memory-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <algorithm>
#include <cstdio>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);                       // space 0: host, i: accelerator(i - 1)
  const std::size_t space = devices.num_accelerators() > 0 ? 1 : 0;
  tessera::Stream& s = memory.device(space).compute_stream(0);
  tessera::Buffer field(memory, 1000, sizeof(float), "field");  // 1000 rows of one float

  // The host writes every row; nothing is copied yet.
  auto* h = static_cast<float*>(field.request(tessera::Access::write).get());
  for (int i = 0; i < 1000; ++i) h[i] = static_cast<float>(i);
  field.release();

  // A kernel doubles rows [0, 500) where `space` is: prepare copies just those rows in.
  auto* d = static_cast<float*>(field.prepare(space, s, tessera::Access::read_write, {0, 500}));
  s.enqueue_host([d] { std::for_each(d, d + 500, [](float& v) { v *= 2.0f; }); });
  field.finish(space, s, tessera::Access::read_write, {0, 500});

  // The host reads everything: only the rows the device changed come back.
  const auto* r = static_cast<const float*>(field.request(tessera::Access::read).get());
  int wrong = 0;
  for (int i = 0; i < 1000; ++i) wrong += r[i] != static_cast<float>(i < 500 ? 2 * i : i);
  field.release();
  const tessera::TransferStats moved = field.bytes_transferred();
  std::printf("memory: %d wrong; copied %zu B in, %zu B back\n", wrong, moved.host_to_device, moved.device_to_host);
  return wrong == 0 && moved.device_to_host == (space == 0 ? 0 : 500 * sizeof(float)) ? 0 : 1;
}
// DOC memory-page end
