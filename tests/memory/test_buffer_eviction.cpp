// Budgets and eviction: least recently used replicas make room, the only valid copy of a row
// is written back first so nothing is lost, and a request that cannot fit says why.
#include "buffer_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace tessera;
using namespace buffer_test;

namespace {

constexpr std::size_t kib = 1024;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' in: " << text;
}

// A host write of `value` into every row.
void fill(Buffer& b, std::uint32_t value) {
  void* h = b.request(Access::write).get();
  for (std::size_t i = 0; i < b.rows(); ++i) put(h, i, value);
  b.release();
}

}  // namespace

// Five buffers and room for two on the device: cycling read_write kernels (whole and partial)
// through them evicts constantly, each eviction writing back rows only the device held.
TEST(BufferEviction, TinyBudgetLosesNoData) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  constexpr std::size_t rows = 5000, buffer_bytes = rows * row_bytes;  // 58.6 KiB
  const std::size_t budget = buffer_bytes * 5 / 2;
  MemoryManager memory(devices, {.device_budgets = {budget}});
  std::vector<Buffer> buffers;
  std::vector<std::vector<std::uint32_t>> model(5, std::vector<std::uint32_t>(rows));
  for (std::size_t b = 0; b < 5; ++b) {
    buffers.emplace_back(memory, rows, row_bytes, "cycled" + std::to_string(b));
    fill(buffers[b], static_cast<std::uint32_t>(b));
    model[b].assign(rows, static_cast<std::uint32_t>(b));
  }
  std::mt19937 rng(5);
  Stream& s = devices.accelerator(0).compute_stream(0);
  for (int step = 0; step < 200; ++step) {
    const std::size_t b = static_cast<std::size_t>(step) % 5;
    const RowRange r = step < 50 ? RowRange{0, rows} : random_rows(rng, rows);
    std::vector<std::uint32_t> old(model[b].begin() + static_cast<std::ptrdiff_t>(r.begin),
                                   model[b].begin() + static_cast<std::ptrdiff_t>(r.end));
    void* d = buffers[b].prepare(1, s, Access::read_write, r);
    s.enqueue_host([d, r, old] {
      for (std::size_t i = r.begin; i < r.end; ++i)
        put(d, i, holds(d, i, old[i - r.begin]) ? old[i - r.begin] + 1 : 0xdeadu);
    });
    buffers[b].finish(1, s, Access::read_write, r);
    for (std::size_t i = r.begin; i < r.end; ++i) ++model[b][i];
    ASSERT_LE(memory.bytes_in_use(1), budget) << "step " << step;
  }
  const MemoryStats stats = memory.stats();
  EXPECT_GT(stats.evictions, 150u);
  EXPECT_GT(stats.bytes_written_back, 0u);
  for (std::size_t b = 0; b < 5; ++b) {
    const void* h = buffers[b].request(Access::read).get();
    for (std::size_t i = 0; i < rows; ++i) ASSERT_TRUE(holds(h, i, model[b][i])) << "buffer " << b << " row " << i;
    buffers[b].release();
  }
}

TEST(BufferEviction, ReplicasValidElsewhereAreDroppedWithoutCopying) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices, {.device_budgets = {2 * 64 * kib}});
  std::vector<Buffer> buffers;
  for (std::size_t b = 0; b < 4; ++b) {
    buffers.emplace_back(memory, 64, kib, "read-only" + std::to_string(b));
    void* h = buffers[b].request(Access::write).get();
    std::fill_n(static_cast<char*>(h), 64 * kib, static_cast<char>('a' + b));
    buffers[b].release();
  }
  Stream& s = devices.accelerator(0).compute_stream(1);
  auto wrong = std::make_shared<std::atomic<int>>(0);
  for (int round = 0; round < 3; ++round)
    for (std::size_t b = 0; b < 4; ++b) {
      const char* d = static_cast<const char*>(buffers[b].prepare(1, s, Access::read));
      s.enqueue_host([d, b, wrong] {
        if (d[0] != static_cast<char>('a' + b) || d[64 * kib - 1] != static_cast<char>('a' + b)) wrong->fetch_add(1);
      });
      buffers[b].finish(1, s, Access::read);
    }
  memory.synchronize();
  EXPECT_EQ(wrong->load(), 0);
  const MemoryStats stats = memory.stats();
  EXPECT_EQ(stats.evictions, 10u) << "every placement after the first two evicts one replica";
  EXPECT_EQ(stats.bytes_written_back, 0u);
  EXPECT_EQ(stats.transferred.device_to_host, 0u) << "the host copy was valid all along";
  EXPECT_EQ(stats.transferred.host_to_device, 12 * 64 * kib);
}

TEST(BufferEviction, LeastRecentlyUsedGoesFirst) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices, {.device_budgets = {2 * 64 * kib}});
  Buffer a(memory, 64, kib, "a"), b(memory, 64, kib, "b"), c(memory, 64, kib, "c");
  for (Buffer* x : {&a, &b, &c}) fill(*x, 1);
  Stream& s = devices.accelerator(0).compute_stream(0);
  auto read_on_device = [&](Buffer& x) {
    x.prepare(1, s, Access::read);
    x.finish(1, s, Access::read);
  };
  read_on_device(a);
  read_on_device(b);
  read_on_device(a);  // a is now the most recently used
  read_on_device(c);
  EXPECT_TRUE(a.has_replica(1));
  EXPECT_FALSE(b.has_replica(1)) << "b was the least recently used";
  EXPECT_TRUE(c.has_replica(1));
  EXPECT_TRUE(b.valid_rows(1).empty());
  EXPECT_EQ(memory.bytes_in_use(1), 2 * 64 * kib);
}

TEST(BufferEviction, ARequestLargerThanTheBudgetFailsAtOnce) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  MemoryManager memory(devices, {.device_budgets = {1 << 20}});
  Buffer big(memory, 2048, kib, "big");
  fill(big, 3);
  Stream& s = devices.accelerator(1).compute_stream(0);
  const std::string m = message_of([&] { big.prepare(2, s, Access::read); });
  expect_contains(m, {"Buffer 'big'", "2.0 MiB", "2097152 bytes", "sim:1", "budget of 1.0 MiB", "device_budgets"});
  EXPECT_FALSE(big.has_replica(2));
  EXPECT_EQ(memory.bytes_in_use(2), 0u);
  // Without options the budget is the device's capacity.
  auto small = DeviceSet::select("sim:1:1MiB");
  MemoryManager whole(small);
  EXPECT_EQ(whole.budget(1), small.accelerator(0).memory_capacity());
  Buffer too_big(whole, 2048, kib, "too-big");
  expect_contains(message_of([&] { too_big.prepare(1, small.accelerator(0).compute_stream(0), Access::write); }),
                  {"Buffer 'too-big'", "2.0 MiB", "sim:0", "budget of 1.0 MiB"});
}

TEST(BufferEviction, ARequestTheBudgetHasRoomForButTheDeviceCannotGiveSaysWhy) {
  // 2 MiB of device memory, the whole of it the budget; 1.5 MiB taken outside the manager.
  auto devices = DeviceSet::select("sim:1:2MiB");
  MemoryManager memory(devices);
  Device& sim = devices.accelerator(0);
  void* taken = sim.allocate(1536 * kib);
  Buffer one(memory, 1024, kib, "one");
  fill(one, 1);
  const std::string m = message_of([&] { one.prepare(1, sim.compute_stream(0), Access::read); });
  expect_contains(m, {"Buffer 'one'", "1.0 MiB", "sim:0", "has room", "could not give 1.0 MiB in one piece",
                      "1.5 MiB of it by allocations other than this MemoryManager's replicas"});
  sim.deallocate(taken, 1536 * kib);
  one.prepare(1, sim.compute_stream(0), Access::read);  // fits once the other allocation is gone
  one.finish(1, sim.compute_stream(0), Access::read);
}

TEST(BufferEviction, ARequestThatCannotFitAfterEvictionNamesWhatIsHeld) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory(devices, {.device_budgets = {1 << 20}});
  Buffer a(memory, 768, kib, "a"), b(memory, 512, kib, "b");
  fill(a, 1);
  fill(b, 2);
  Stream& s = devices.accelerator(0).compute_stream(0);
  void* d = a.prepare(1, s, Access::read_write);  // in flight: cannot be evicted
  const std::string m = message_of([&] { b.prepare(1, s, Access::read); });
  expect_contains(m, {"Buffer 'b'", "512.0 KiB", "sim:0", "budget 1.0 MiB", "768.0 KiB", "1 replica(s)",
                      "between prepare and finish"});
  EXPECT_FALSE(b.has_replica(1));
  s.enqueue_host([d] {
    for (std::size_t i = 0; i < 768 * kib; i += 4096) static_cast<char*>(d)[i] = 'x';
  });
  a.finish(1, s, Access::read_write);
  b.prepare(1, s, Access::read);  // a goes now: written back, then freed
  b.finish(1, s, Access::read);
  EXPECT_FALSE(a.has_replica(1));
  EXPECT_EQ(memory.stats().bytes_written_back, 768 * kib);

  // A host hold pins the buffer's device replica too.
  const void* held = b.request(Access::read, {0, 1}).get();
  EXPECT_NE(held, nullptr);
  expect_contains(message_of([&] { a.prepare(1, s, Access::read); }), {"Buffer 'a'", "host hold"});
  b.release();
  const char* back = static_cast<const char*>(a.request(Access::read).get());
  EXPECT_EQ(back[4096], 'x') << "the kernel's write survived eviction";
  a.release();
  a.prepare(1, s, Access::read);
  a.finish(1, s, Access::read);
  EXPECT_FALSE(b.has_replica(1));
}

TEST(BufferEviction, BudgetsComeFromOptions) {
  auto devices = DeviceSet::select("sim:3:4MiB");
  MemoryManager every(devices, {.device_budgets = {1 << 20}});
  EXPECT_EQ(every.budget(3), std::size_t{1} << 20);
  MemoryManager each(devices, {.device_budgets = {1 << 20, 2 << 20, 3 << 20}});
  EXPECT_EQ(each.budget(2), std::size_t{2} << 20);
  EXPECT_EQ(each.budget(0), std::numeric_limits<std::size_t>::max()) << "the host has no budget";
  expect_contains(message_of([&] {
                    MemoryManager bad(devices, {.device_budgets = {1, 2}});
                  }),
                  {"device_budgets has 2 entries", "3 accelerator(s)"});
  expect_contains(message_of([&] {
                    MemoryManager bad(devices, {.device_budgets = {1 << 20, 0, 1 << 20}});
                  }),
                  {"sim:1", "budget of 0 bytes"});
  EXPECT_THROW((void)each.budget(4), Error);
}

// Two threads, each with its own buffers on the same two devices, under budgets that force
// evictions of the other thread's replicas: values stay right and nothing deadlocks.
TEST(BufferEviction, ThreadsEvictingEachOthersReplicas) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  constexpr std::size_t rows = 2000, per_buffer = rows * row_bytes;
  MemoryManager memory(devices, {.device_budgets = {3 * per_buffer + per_buffer / 2}});
  std::atomic<int> wrong{0};
  auto stale = std::make_shared<std::atomic<int>>(0);
  auto work = [&](unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<Buffer> buffers;
    std::vector<std::vector<std::uint32_t>> model(3, std::vector<std::uint32_t>(rows, seed));
    for (std::size_t b = 0; b < 3; ++b) {
      buffers.emplace_back(memory, rows, row_bytes, "t" + std::to_string(seed) + "/" + std::to_string(b));
      fill(buffers[b], seed);
    }
    for (int step = 0; step < 300; ++step) {
      const std::size_t b = rng() % 3, space = rng() % 3;
      const RowRange r = random_rows(rng, rows);
      const auto mode = static_cast<Access>(rng() % 4);
      std::vector<std::uint32_t> old(model[b].begin() + static_cast<std::ptrdiff_t>(r.begin),
                                     model[b].begin() + static_cast<std::ptrdiff_t>(r.end));
      const std::uint32_t fresh = seed * 100000u + static_cast<std::uint32_t>(step);
      if (space == 0) {
        void* h = buffers[b].request(mode, r).get();
        for (std::size_t i = r.begin; i < r.end; ++i) {
          if (access_reads(mode) && !holds(h, i, old[i - r.begin])) wrong.fetch_add(1);
          if (access_writes(mode)) put(h, i, fresh);
        }
        buffers[b].release();
      } else {
        Stream& s = devices.accelerator(space - 1).compute_stream(seed % 2);
        void* d = buffers[b].prepare(space, s, mode, r);
        s.enqueue_host([d, r, old, mode, fresh, stale] {
          for (std::size_t i = r.begin; i < r.end; ++i) {
            if (access_reads(mode) && !holds(d, i, old[i - r.begin])) stale->fetch_add(1);
            if (access_writes(mode)) put(d, i, fresh);
          }
        });
        buffers[b].finish(space, s, mode, r);
      }
      if (access_writes(mode))
        for (std::size_t i = r.begin; i < r.end; ++i) model[b][i] = fresh;
    }
    for (std::size_t b = 0; b < 3; ++b) {
      const void* h = buffers[b].request(Access::read).get();
      for (std::size_t i = 0; i < rows; ++i)
        if (!holds(h, i, model[b][i])) wrong.fetch_add(1);
      buffers[b].release();
    }
  };
  std::thread other([&] { EXPECT_NO_THROW(work(7)); });
  EXPECT_NO_THROW(work(8));
  other.join();
  memory.synchronize();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(stale->load(), 0);
  EXPECT_GT(memory.stats().evictions, 0u);
}
