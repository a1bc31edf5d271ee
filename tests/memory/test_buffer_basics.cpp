// Buffer basics: the docs example, lazy allocation, shared handles, and lifetime: a buffer
// outlives its last handle until the copies and kernels in flight for it have run.
#include "buffer_test_support.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <numeric>
#include <optional>

using namespace tessera;
using namespace buffer_test;

// The Buffer example of docs/memory.md; keep the text between the DOC markers identical.
TEST(Buffer, DocExample) {
  // DOC memory-buffer-example begin
  auto devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::MemoryManager memory(devices);                       // space 0: host, 1: sim:0, 2: sim:1
  tessera::Buffer field(memory, 1000, sizeof(float), "field");  // 1000 rows of one float

  // The host writes every row; nothing is copied yet.
  auto* h = static_cast<float*>(field.request(tessera::Access::write).get());
  std::fill_n(h, 1000, 1.0f);
  field.release();

  // A kernel on sim:0 doubles rows [0, 500): prepare copies just those rows in.
  tessera::Stream& s = devices.accelerator(0).compute_stream(0);
  auto* d = static_cast<float*>(field.prepare(1, s, tessera::Access::read_write, {0, 500}));
  s.enqueue_host([d] { std::for_each(d, d + 500, [](float& x) { x *= 2; }); });
  field.finish(1, s, tessera::Access::read_write, {0, 500});

  // The host reads everything: only the 500 rows sim:0 changed come back.
  auto* r = static_cast<const float*>(field.request(tessera::Access::read).get());
  float first = r[0], last = r[999];  // 2 and 1
  field.release();
  tessera::TransferStats moved = field.bytes_transferred();  // 2000 B each way
  // DOC memory-buffer-example end
  EXPECT_EQ(first, 2.0f);
  EXPECT_EQ(last, 1.0f);
  EXPECT_EQ(moved, (TransferStats{2000, 2000, 0}));
}

TEST(Buffer, NothingIsAllocatedBeforeFirstUse) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices);
  Buffer b(memory, 1 << 10, 1 << 10, "lazy");
  EXPECT_EQ(b.bytes(), std::size_t{1} << 20);
  EXPECT_FALSE(b.has_replica(0));
  EXPECT_FALSE(b.has_replica(1));
  EXPECT_EQ(memory.bytes_in_use(1), 0u);
  EXPECT_EQ(devices.accelerator(0).bytes_in_use(), 0u);
  Stream& s = devices.accelerator(0).compute_stream(0);
  b.prepare(1, s, Access::write);
  b.finish(1, s, Access::write);
  EXPECT_TRUE(b.has_replica(1));
  EXPECT_FALSE(b.has_replica(0)) << "a device write needs no host replica";
  EXPECT_EQ(memory.bytes_in_use(1), std::size_t{1} << 20);
}

TEST(Buffer, CopiesOfAHandleShareOneArray) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices);
  Buffer a(memory, 4, row_bytes, "shared");
  Buffer b = a;
  void* h = a.request(Access::write).get();
  for (std::size_t i = 0; i < 4; ++i) put(h, i, 9);
  a.release();
  EXPECT_EQ(b.valid_rows(0), RowRanges(RowRange{0, 4}));
  EXPECT_EQ(b.name(), "shared");
  EXPECT_EQ(b.request(Access::read).get(), h);
  b.release();
}

// The last handle goes while a copy into the device and a kernel reading it are still queued
// behind a gate: the replicas stay until they have run, then go back to the pools.
TEST(Buffer, LivesUntilItsTransfersAndKernelsHaveRun) {
  SimOptions o;
  o.memory_bytes = 16 << 20;
  o.copy_bytes_per_second = 200e6;  // 1 MiB takes 5 ms
  auto devices = DeviceSet::simulated(1, o);
  MemoryManager memory(devices);
  Device& dev = devices.accelerator(0);
  auto sum = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::promise<void> gate;
  dev.copy_stream(CopyDirection::host_to_device).enqueue_host([f = gate.get_future().share()] { f.wait(); });
  {
    Buffer b(memory, 1 << 18, sizeof(std::uint32_t), "short-lived");  // 1 MiB
    auto* h = static_cast<std::uint32_t*>(b.request(Access::write).get());
    std::iota(h, h + (1 << 18), 0u);
    b.release();
    Stream& s = dev.compute_stream(0);
    auto* d = static_cast<const std::uint32_t*>(b.prepare(1, s, Access::read));
    s.enqueue_host([d, sum] { sum->store(std::accumulate(d, d + (1 << 18), std::uint64_t{0})); });
    b.finish(1, s, Access::read);
  }
  EXPECT_EQ(memory.bytes_in_use(1), std::size_t{1} << 20) << "the copy in flight keeps the replica";
  EXPECT_GT(devices.host().bytes_in_use(), 0u) << "and the host replica it copies from";
  gate.set_value();
  memory.synchronize();
  EXPECT_EQ(sum->load(), (std::uint64_t{1} << 18) * ((1 << 18) - 1) / 2);
  EXPECT_EQ(memory.bytes_in_use(1), 0u);
  EXPECT_EQ(dev.bytes_in_use(), 0u);
  EXPECT_EQ(devices.host().bytes_in_use(), 0u);
}

// The manager may go first: buffers keep its state, and it waits for transfers when it goes.
TEST(Buffer, OutlivesItsManagerHandle) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  std::optional<MemoryManager> memory(std::in_place, devices);
  Buffer b(*memory, 8, row_bytes, "orphan");
  void* h = b.request(Access::write).get();
  for (std::size_t i = 0; i < 8; ++i) put(h, i, 5);
  b.release();
  Stream& s = devices.accelerator(0).compute_stream(0);
  b.prepare(1, s, Access::read_write);
  b.finish(1, s, Access::read_write);
  memory.reset();
  const void* back = b.request(Access::read).get();
  EXPECT_TRUE(holds(back, 7, 5));
  b.release();
}
