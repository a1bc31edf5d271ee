// Buffer coherence: random sequences of host requests and device kernels on three simulated
// devices must see and leave the same values as a sequential model, with validity and copied
// bytes tracked exactly, row by row.
#include "buffer_test_support.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace tessera;
using namespace buffer_test;

namespace {

struct Scenario {
  unsigned seed;
  int steps;
  std::chrono::nanoseconds copy_latency{0};
  bool slow_kernels = false;
};

// Kernels run on stream threads; they report what they saw here instead of asserting there.
struct KernelReport {
  std::atomic<int> stale_reads{0};
};

void run_random_sequence(const Scenario& sc) {
  SimOptions o;
  o.memory_bytes = 8 << 20;
  o.compute_streams = 2;
  o.copy_latency = sc.copy_latency;
  auto devices = DeviceSet::simulated(3, o);
  MemoryManager memory(devices);
  const std::size_t spaces = memory.num_spaces();
  std::mt19937 rng(sc.seed);

  constexpr std::size_t num_buffers = 2, rows = 40;
  std::vector<Buffer> buffers;
  std::vector<std::vector<std::uint32_t>> values(num_buffers, std::vector<std::uint32_t>(rows));
  // valid[b][space][row]: what the sequential model says each replica holds.
  std::vector<std::vector<std::vector<bool>>> valid(
      num_buffers, std::vector<std::vector<bool>>(spaces, std::vector<bool>(rows, false)));
  for (std::size_t b = 0; b < num_buffers; ++b) {
    buffers.emplace_back(memory, rows, row_bytes, "b" + std::to_string(b));
    void* h = buffers[b].request(Access::write).get();
    for (std::size_t r = 0; r < rows; ++r) put(h, r, values[b][r] = static_cast<std::uint32_t>(b * 1000 + r));
    buffers[b].release();
    valid[b][0].assign(rows, true);
  }
  auto report = std::make_shared<KernelReport>();
  std::uint32_t next_value = 1u << 20;

  for (int step = 0; step < sc.steps; ++step) {
    const std::size_t b = rng() % num_buffers;
    const std::size_t space = rng() % spaces;
    const auto mode = static_cast<Access>(rng() % 4);
    const RowRange r = random_rows(rng, rows);
    Buffer& buf = buffers[b];
    SCOPED_TRACE("seed " + std::to_string(sc.seed) + " step " + std::to_string(step) + ": " +
                 std::string(to_string(mode)) + " of rows " + r.to_string() + " of " + buf.name() + " in space " +
                 std::to_string(space));

    std::size_t rows_to_copy = 0;
    if (access_reads(mode))
      for (std::size_t i = r.begin; i < r.end; ++i) rows_to_copy += !valid[b][space][i];
    const std::size_t copied_before = buf.bytes_transferred().total();

    // What the access leaves in each row: a fresh value for write, a function of the old one
    // for read_write (a*3+1) and reduce (a+step, a "sum").
    std::vector<std::uint32_t> old(values[b].begin() + static_cast<std::ptrdiff_t>(r.begin),
                                   values[b].begin() + static_cast<std::ptrdiff_t>(r.end));
    std::vector<std::uint32_t> now = old;
    for (std::uint32_t& v : now) {
      if (mode == Access::write) v = next_value++;
      if (mode == Access::read_write) v = v * 3 + 1;
      if (mode == Access::reduce) v = v + static_cast<std::uint32_t>(step);
    }

    if (space == 0) {
      void* h = buf.request(mode, r).get();
      if (access_reads(mode)) {
        for (std::size_t i = r.begin; i < r.end; ++i) ASSERT_TRUE(holds(h, i, old[i - r.begin])) << "row " << i;
      }
      if (access_writes(mode))
        for (std::size_t i = r.begin; i < r.end; ++i) put(h, i, now[i - r.begin]);
      buf.release();
    } else {
      Stream& s = devices.accelerator(space - 1).compute_stream(rng() % 2);
      void* d = buf.prepare(space, s, mode, r);
      const auto delay = std::chrono::microseconds(sc.slow_kernels ? rng() % 200 : 0);
      s.enqueue_host(
          [d, r, mode, old, now, delay, report] {
            if (delay.count() > 0) std::this_thread::sleep_for(delay);
            if (access_reads(mode))
              for (std::size_t i = r.begin; i < r.end; ++i)
                if (!holds(d, i, old[i - r.begin])) report->stale_reads.fetch_add(1);
            if (access_writes(mode))
              for (std::size_t i = r.begin; i < r.end; ++i) put(d, i, now[i - r.begin]);
          },
          "kernel");
      buf.finish(space, s, mode, r);
    }

    for (std::size_t i = r.begin; i < r.end; ++i) {
      values[b][i] = now[i - r.begin];
      if (access_writes(mode))
        for (std::size_t other = 0; other < spaces; ++other) valid[b][other][i] = false;
      valid[b][space][i] = true;
    }
    for (std::size_t sp = 0; sp < spaces; ++sp)
      ASSERT_EQ(buf.valid_rows(sp), ranges_of(valid[b][sp])) << "validity of space " << sp;
    ASSERT_EQ(buf.bytes_transferred().total() - copied_before, rows_to_copy * row_bytes)
        << "exactly the rows the replica lacked are copied, once each";
  }

  for (std::size_t b = 0; b < num_buffers; ++b) {
    const void* h = buffers[b].request(Access::read).get();
    for (std::size_t i = 0; i < rows; ++i) EXPECT_TRUE(holds(h, i, values[b][i])) << buffers[b].name() << " row " << i;
    buffers[b].release();
  }
  memory.synchronize();
  EXPECT_EQ(report->stale_reads.load(), 0) << "device kernels read values the model had overwritten";
}

}  // namespace

TEST(BufferCoherence, RandomAccessesMatchASequentialModel) {
  for (unsigned seed : {1u, 2u, 3u}) run_random_sequence({seed, 2000});
}

TEST(BufferCoherence, RandomAccessesWithSlowCopiesAndKernels) {
  // Slow copies and kernels keep several of them in flight at once, so a missing event wait
  // shows as a stale read rather than passing by luck.
  for (unsigned seed : {11u, 12u}) run_random_sequence({seed, 600, std::chrono::microseconds(100), true});
}

TEST(BufferCoherence, SubRangeValidityCopiesOnlyMissingRows) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  MemoryManager memory(devices);
  Buffer b(memory, 16, row_bytes, "partial");
  Stream& s0 = devices.accelerator(0).compute_stream(0);
  Stream& s1 = devices.accelerator(1).compute_stream(1);

  void* d0 = b.prepare(1, s0, Access::write, {0, 10});
  s0.enqueue_host([d0] {
    for (std::size_t i = 0; i < 10; ++i) put(d0, i, static_cast<std::uint32_t>(i + 100));
  });
  b.finish(1, s0, Access::write, {0, 10});
  EXPECT_EQ(b.bytes_transferred().total(), 0u) << "a write copies nothing in";
  EXPECT_EQ(b.valid_rows(1), RowRanges(RowRange{0, 10}));
  EXPECT_TRUE(b.valid_rows(0).empty());

  auto seen = std::make_shared<std::atomic<bool>>(false);
  void* d1 = b.prepare(2, s1, Access::read, {5, 8});
  s1.enqueue_host([d1, seen] { seen->store(holds(d1, 5, 105) && holds(d1, 7, 107)); });
  b.finish(2, s1, Access::read, {5, 8});
  EXPECT_EQ(b.bytes_transferred(), (TransferStats{0, 0, 3 * row_bytes})) << "exactly 3 rows, device to device";
  EXPECT_EQ(b.valid_rows(2), RowRanges(RowRange{5, 8}));
  EXPECT_EQ(b.valid_rows(1), RowRanges(RowRange{0, 10})) << "a read leaves the source valid";

  const void* h = b.request(Access::read, {0, 4}).get();
  EXPECT_TRUE(holds(h, 3, 103));
  b.release();
  EXPECT_EQ(b.bytes_transferred().device_to_host, 4 * row_bytes);
  h = b.request(Access::read, {0, 10}).get();
  EXPECT_TRUE(holds(h, 9, 109));
  b.release();
  EXPECT_EQ(b.bytes_transferred().device_to_host, 10 * row_bytes) << "rows [0,4) were valid on the host already";

  // One row rewritten on sim:1: every other replica loses exactly that row, and only it comes back.
  void* again = b.prepare(2, s1, Access::read_write, {6, 7});
  s1.enqueue_host([again] { put(again, 6, 600); });
  b.finish(2, s1, Access::read_write, {6, 7});
  EXPECT_EQ(b.valid_rows(1).to_string(), "{[0,6), [7,10)}");
  EXPECT_EQ(b.valid_rows(0).to_string(), "{[0,6), [7,10)}");
  h = b.request(Access::read, {0, 10}).get();
  EXPECT_TRUE(holds(h, 6, 600));
  EXPECT_TRUE(holds(h, 7, 107));
  b.release();
  EXPECT_EQ(b.bytes_transferred().device_to_host, 11 * row_bytes);
  memory.synchronize();
  EXPECT_TRUE(seen->load());
}

TEST(BufferCoherence, DevicesCopyFromADeviceOfTheirKindBeforeTheHost) {
  auto devices = DeviceSet::select("sim:3:16MiB");
  MemoryManager memory(devices);
  Buffer b(memory, 8, row_bytes, "fan-out");
  void* h = b.request(Access::write).get();
  for (std::size_t i = 0; i < 8; ++i) put(h, i, static_cast<std::uint32_t>(i));
  b.release();
  for (std::size_t space = 1; space <= 3; ++space) {
    Stream& s = devices.accelerator(space - 1).compute_stream(0);
    b.prepare(space, s, Access::read);
    b.finish(space, s, Access::read);
  }
  EXPECT_EQ(b.bytes_transferred(), (TransferStats{8 * row_bytes, 0, 2 * 8 * row_bytes}))
      << "the host link is used once; the other devices copy from sim:0";
  EXPECT_EQ(memory.stats().transferred, b.bytes_transferred());
}

// prepare on the host space with a host stream: CPU-kind nodes use the same protocol.
TEST(BufferCoherence, HostSpaceAccessesThroughAHostStream) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices);
  Buffer b(memory, 4, row_bytes, "host-kernel");
  Stream& d = devices.accelerator(0).compute_stream(0);
  void* dev = b.prepare(1, d, Access::write);
  d.enqueue_host([dev] {
    for (std::size_t i = 0; i < 4; ++i) put(dev, i, 7);
  });
  b.finish(1, d, Access::write);
  Stream& cpu = devices.host().compute_stream(0);
  void* h = b.prepare(0, cpu, Access::read_write);  // waits, on the host, for the copy back
  bool ok = true;
  cpu.enqueue_host([&] {
    for (std::size_t i = 0; i < 4; ++i) {
      ok = ok && holds(h, i, 7);
      put(h, i, 8);
    }
  });
  b.finish(0, cpu, Access::read_write);
  EXPECT_TRUE(ok);
  EXPECT_EQ(b.valid_rows(1), RowRanges());
  void* back = b.prepare(1, d, Access::read);
  auto seen = std::make_shared<std::atomic<bool>>(false);
  d.enqueue_host([back, seen] { seen->store(holds(back, 3, 8)); });
  b.finish(1, d, Access::read);
  memory.synchronize();
  EXPECT_TRUE(seen->load());
}

// The host's future waits for device work that still reads the host replica (a copy out of it)
// before a write may begin, and for the copy in before a read.
TEST(BufferCoherence, RequestFutureWaitsForCopiesInFlight) {
  SimOptions o;
  o.memory_bytes = 16 << 20;
  o.copy_latency = std::chrono::milliseconds(100);
  auto devices = DeviceSet::simulated(1, o);
  MemoryManager memory(devices);
  Buffer b(memory, 1024, row_bytes, "slow");
  void* h = b.request(Access::write).get();
  for (std::size_t i = 0; i < 1024; ++i) put(h, i, 1);
  b.release();
  Stream& s = devices.accelerator(0).compute_stream(0);
  b.prepare(1, s, Access::read);  // a copy host -> sim:0 that takes 100 ms
  b.finish(1, s, Access::read);
  std::future<void*> w = b.request(Access::write);
  EXPECT_EQ(w.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the host must not overwrite rows a copy is still reading";
  h = w.get();
  for (std::size_t i = 0; i < 1024; ++i) put(h, i, 2);
  b.release();
  auto seen = std::make_shared<std::atomic<bool>>(false);
  void* d = b.prepare(1, s, Access::read);
  s.enqueue_host([d, seen] { seen->store(holds(d, 0, 2) && holds(d, 1023, 2)); });
  b.finish(1, s, Access::read);
  memory.synchronize();
  EXPECT_TRUE(seen->load());
}
