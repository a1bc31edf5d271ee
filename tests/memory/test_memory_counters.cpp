// MemoryStats::host_waits and ::device_allocations: exact counts for scripted sequences. A
// device kernel that must still be running when the host asks is held back by a gate, so
// "had to wait" never depends on timing.
#include <tessera/device/device_set.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/memory/buffer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <memory>

using namespace tessera;

namespace {

/// Blocks a stream until open() is called: work enqueued behind it is surely pending.
class Gate {
 public:
  void close(Stream& s) {
    auto f = opened_.get_future().share();
    s.enqueue_host([f] { f.wait(); }, "gate");
  }
  void open() { opened_.set_value(); }

 private:
  std::promise<void> opened_;
};

void host_fill(Buffer& b, float value) {
  auto* h = static_cast<float*>(b.request(Access::write).get());
  std::fill_n(h, b.rows(), value);
  b.release();
}

}  // namespace

TEST(MemoryCounters, HostRequestWaitsOnlyForPendingDeviceWork) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices);
  Buffer b(memory, 256, sizeof(float), "b");

  host_fill(b, 1.0f);  // a fresh host replica: nothing to wait for
  EXPECT_EQ(memory.stats().host_waits, 0u);

  Stream& s = devices.accelerator(0).compute_stream(0);
  Gate gate;
  gate.close(s);
  auto* d = static_cast<float*>(b.prepare(1, s, Access::read_write));
  s.enqueue_host([d] { std::for_each(d, d + 256, [](float& x) { x *= 2; }); });
  b.finish(1, s, Access::read_write);

  // The device wrote every row and has not run yet: the copy back is pending, so this waits.
  std::future<void*> f = b.request(Access::read);
  EXPECT_EQ(memory.stats().host_waits, 1u);
  gate.open();
  EXPECT_EQ(static_cast<const float*>(f.get())[255], 2.0f);
  b.release();

  // Everything has run and the host copy is valid: no wait.
  memory.synchronize();
  b.request(Access::read).get();
  b.release();
  EXPECT_EQ(memory.stats().host_waits, 1u);

  // A host write after a device read waits for nothing on the host replica once the read ran.
  b.prepare(1, s, Access::read);
  b.finish(1, s, Access::read);
  memory.synchronize();
  host_fill(b, 3.0f);
  EXPECT_EQ(memory.stats().host_waits, 1u);

  // Device write, then a host *write*: the host overwrites, so nothing is copied or awaited.
  Gate gate2;
  gate2.close(s);
  b.prepare(1, s, Access::write);
  b.finish(1, s, Access::write);
  host_fill(b, 4.0f);
  EXPECT_EQ(memory.stats().host_waits, 1u);
  gate2.open();

  // A second gated device write and read back: the second wait.
  Gate gate3;
  gate3.close(s);
  b.prepare(1, s, Access::read_write);
  b.finish(1, s, Access::read_write);
  std::future<void*> g = b.request(Access::read, {0, 16});
  EXPECT_EQ(memory.stats().host_waits, 2u);
  gate3.open();
  g.get();
  b.release();
  memory.synchronize();
  EXPECT_EQ(memory.stats().device_allocations, 1u) << "one replica on sim:0, reused by every access";
}

TEST(MemoryCounters, DeviceAllocationsCountReplicasPlaced) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  MemoryManager memory(devices);
  Buffer a(memory, 64, 1024, "a");
  Buffer b(memory, 64, 1024, "b");
  host_fill(a, 1.0f);
  host_fill(b, 1.0f);
  EXPECT_EQ(memory.stats().device_allocations, 0u) << "host replicas are not device allocations";

  Stream& s0 = devices.accelerator(0).compute_stream(0);
  Stream& s1 = devices.accelerator(1).compute_stream(0);
  for (int step = 0; step < 3; ++step) {
    a.prepare(1, s0, Access::read_write);
    a.finish(1, s0, Access::read_write);
    b.prepare(2, s1, Access::read);
    b.finish(2, s1, Access::read);
    a.prepare(2, s1, Access::read);  // a's replica on sim:1, copied device to device
    a.finish(2, s1, Access::read);
  }
  memory.synchronize();
  EXPECT_EQ(memory.stats().device_allocations, 3u) << "a on sim:0 and sim:1, b on sim:1; steps 2 and 3 reuse them";
  EXPECT_EQ(memory.stats().host_waits, 0u);
}

TEST(MemoryCounters, EvictedReplicasAreAllocatedAgain) {
  constexpr std::size_t kib = 1024;
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices, {.device_budgets = {64 * kib}});  // room for one of the two
  Buffer a(memory, 64, kib, "a");
  Buffer b(memory, 64, kib, "b");
  host_fill(a, 1.0f);
  host_fill(b, 2.0f);
  Stream& s = devices.accelerator(0).compute_stream(0);
  for (int round = 0; round < 2; ++round)
    for (Buffer* x : {&a, &b}) {
      x->prepare(1, s, Access::read);
      x->finish(1, s, Access::read);
    }
  memory.synchronize();
  const MemoryStats stats = memory.stats();
  EXPECT_EQ(stats.evictions, 3u);
  EXPECT_EQ(stats.device_allocations, 4u) << "every placement allocates, evicted or not";
}
