// Simulated devices: in-order streams, events across streams, copies that really move bytes
// between separate memories, memory limits, and GPU-kind graph nodes completing through streams.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

using namespace tessera;

TEST(SimDevice, StreamRunsWorkInOrder) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::vector<int> order;
  for (int i = 0; i < 1000; ++i) s.enqueue_host([&order, i] { order.push_back(i); });
  s.synchronize();
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(SimDevice, EventOrdersWorkAcrossStreamsWithoutBlockingTheHost) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Device& d = devices.accelerator(0);
  std::atomic<int> value{0};
  int seen = -1;
  for (int round = 0; round < 20; ++round) {
    value.store(0);
    d.compute_stream(0).enqueue_host([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      value.store(round + 1);
    });
    Event produced = d.compute_stream(0).record();
    d.compute_stream(1).wait(produced);
    d.compute_stream(1).enqueue_host([&] { seen = value.load(); });
    d.compute_stream(1).synchronize();
    ASSERT_TRUE(produced.ready());
    ASSERT_EQ(seen, round + 1);
  }
}

TEST(SimDevice, CopiesMoveBytesBetweenSeparateMemories) {
  auto devices = DeviceSet::select("sim:2:32MiB");
  Device& a = devices.accelerator(0);
  Device& b = devices.accelerator(1);
  const std::size_t n = 1 << 20;
  std::vector<std::uint32_t> in(n), out(n, 0);
  std::iota(in.begin(), in.end(), 7u);
  auto* pa = static_cast<std::uint32_t*>(a.allocate(n * 4));
  auto* pb = static_cast<std::uint32_t*>(b.allocate(n * 4));
  ASSERT_NE(static_cast<void*>(pa), static_cast<void*>(pb));
  EXPECT_EQ(a.bytes_in_use(), n * 4);
  Stream& h2d = a.copy_stream(CopyDirection::host_to_device);
  a.copy_async(pa, in.data(), n * 4, CopyDirection::host_to_device, h2d);
  Stream& d2d = a.copy_stream(CopyDirection::device_to_device);
  d2d.wait(h2d.record());
  a.copy_async(pb, pa, n * 4, CopyDirection::device_to_device, d2d);
  Stream& d2h = b.copy_stream(CopyDirection::device_to_host);
  d2h.wait(d2d.record());
  b.copy_async(out.data(), pb, n * 4, CopyDirection::device_to_host, d2h);
  d2h.synchronize();
  EXPECT_EQ(out, in);
  // The copy really went through b's memory: overwrite it and copy back again.
  std::memset(pb, 0, n * 4);
  b.copy_async(out.data(), pb, n * 4, CopyDirection::device_to_host, d2h);
  d2h.synchronize();
  EXPECT_EQ(out[5], 0u);
  a.deallocate(pa, n * 4);
  b.deallocate(pb, n * 4);
  EXPECT_EQ(a.bytes_in_use(), 0u);
}

// A staged copy reads the source before it returns (it may be reused at once) and writes the
// device in stream order: work queued before it on the stream still sees the old bytes.
TEST(SimDevice, StagedCopyReadsTheSourceAtOnceAndWritesInStreamOrder) {
  auto devices = DeviceSet::select("sim:1:8MiB");
  Device& d = devices.accelerator(0);
  Stream& h2d = d.copy_stream(CopyDirection::host_to_device);
  const std::size_t n = 4096;
  auto* p = static_cast<int*>(d.allocate(n * sizeof(int)));
  std::fill_n(p, n, 5);
  std::atomic<bool> go{false};
  int seen_before = -1;
  h2d.enqueue_host([&] {
    while (!go.load()) std::this_thread::yield();
    seen_before = p[n - 1];
  });
  std::vector<int> in(n);
  std::iota(in.begin(), in.end(), 100);
  ASSERT_TRUE(d.copy_to_device_staged(p, in.data(), n * sizeof(int), h2d));
  std::fill(in.begin(), in.end(), -1);  // reused at once
  go = true;
  h2d.synchronize();
  EXPECT_EQ(seen_before, 5);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], static_cast<int>(100 + i)) << "element " << i;
  EXPECT_FALSE(d.copy_to_device_staged(p, in.data(), 0, h2d));  // nothing to stage
  EXPECT_THROW(d.copy_to_device_staged(in.data(), p, 64, h2d), Error);  // backwards
  d.deallocate(p, n * sizeof(int));
}

TEST(SimDevice, StagedCopyDocsExample) {
  auto devices = DeviceSet::select("sim:1:8MiB");
  tessera::Device& gpu = devices.accelerator(0);
  const std::size_t n = 1000;
  std::vector<float> in(n, 2.5f);
  const float* host_x = in.data();
  auto* x = static_cast<float*>(gpu.allocate(n * sizeof(float)));
  tessera::Stream& h2d = gpu.copy_stream(tessera::CopyDirection::host_to_device);
  // DOC devices-staged-copy begin
  if (!gpu.copy_to_device_staged(x, host_x, n * sizeof(float), h2d))
    gpu.copy_async(x, host_x, n * sizeof(float), tessera::CopyDirection::host_to_device, h2d);
  // DOC devices-staged-copy end
  h2d.synchronize();
  EXPECT_TRUE(std::all_of(x, x + n, [](float v) { return v == 2.5f; }));
  gpu.deallocate(x, n * sizeof(float));
}

TEST(SimDevice, WrongDirectionAndForeignStreamAreErrors) {
  auto devices = DeviceSet::select("sim:2:8MiB");
  Device& a = devices.accelerator(0);
  std::vector<char> host(64);
  void* p = a.allocate(64);
  try {
    a.copy_async(host.data(), p, 64, CopyDirection::host_to_device, a.copy_stream(CopyDirection::host_to_device));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not match the direction"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.copy_async(p, host.data(), 64, CopyDirection::host_to_device,
                            devices.accelerator(1).copy_stream(CopyDirection::host_to_device)),
               Error);
  a.deallocate(p, 64);
}

TEST(SimDevice, MemoryLimitIsEnforcedWithAClearMessage) {
  auto devices = DeviceSet::select("sim:1:4MiB");
  Device& d = devices.accelerator(0);
  void* big = d.allocate(3 << 20);
  EXPECT_EQ(d.try_allocate(2 << 20), nullptr);
  try {
    d.allocate(2 << 20);
    FAIL();
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("sim:0"), std::string::npos) << m;
    EXPECT_NE(m.find("2.0 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("4.0 MiB"), std::string::npos) << m;
  }
  d.deallocate(big, 3 << 20);
  void* again = d.allocate(4 << 20);  // everything back, in one piece
  d.deallocate(again, 4 << 20);
}

TEST(SimDevice, CopyModelMakesCopiesTakeTheirModelledTime) {
  // A lower bound only (the model must not be faster than asked); speed itself is measured in
  // benchmarks, not tests.
  SimOptions o;
  o.memory_bytes = 8 << 20;
  o.copy_bytes_per_second = 100e6;
  o.copy_latency = std::chrono::milliseconds(2);
  auto devices = DeviceSet::simulated(1, o);
  Device& d = devices.accelerator(0);
  std::vector<char> h(1 << 20, 'x');
  void* p = d.allocate(h.size());
  const auto t0 = std::chrono::steady_clock::now();
  d.copy_async(p, h.data(), h.size(), CopyDirection::host_to_device, d.copy_stream(CopyDirection::host_to_device));
  d.synchronize();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, std::chrono::microseconds(2000 + 10485));  // latency + 1 MiB at 100 MB/s
  EXPECT_EQ(static_cast<char*>(p)[12345], 'x');
  d.deallocate(p, h.size());
  EXPECT_THROW(DeviceSet::simulated(0, o), Error);
}

// GPU-kind nodes on sim:4: each enqueues its work on a device stream and completes through the
// stream, so no worker waits; every dependency of a random DAG holds.
TEST(SimDevice, RandomDagWithGpuNodesOnFourDevices) {
  auto devices = DeviceSet::select("sim:4:16MiB");
  ExecutorOptions opt;
  opt.num_devices = 4;
  Executor ex(opt);
  const std::size_t n = 10000;
  NodeGraph g("sim-dag");
  std::atomic<std::uint64_t> clock{0};
  std::vector<std::atomic<std::uint64_t>> stamp(n);
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::mt19937 rng(42);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 4 == 0) {
      Stream& s = devices.accelerator(i / 4 % 4).compute_stream(i / 16 % 2);
      g.emplace_async([&, i](AsyncDone done) {
         s.enqueue_host([&, i] { stamp[i].store(clock.fetch_add(1) + 1); });
         s.then([done] { done.complete(); });
       }).kind(ExecKind::gpu);
    } else {
      g.emplace([&, i] { stamp[i].store(clock.fetch_add(1) + 1); });
    }
  }
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t k = rng() % 4; k > 0; --k) {
      std::size_t from = rng() % i;
      g.node(from).precede(g.node(i));
      edges.emplace_back(from, i);
    }
  for (int run = 0; run < 5; ++run) {
    for (auto& s : stamp) s.store(0);
    ex.run(g).get();
    for (auto [a, b] : edges) ASSERT_LT(stamp[a].load(), stamp[b].load()) << "edge " << a << " -> " << b;
    for (auto& s : stamp) ASSERT_GT(s.load(), 0u);
  }
}

// Device streams join the executor's trace: a track per stream that did work, copies named
// with their byte counts.
TEST(SimDevice, StreamsAppearAsTracksInTheExecutorsTrace) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Device& d = devices.accelerator(0);
  Executor ex;
  std::vector<char> host(1 << 20, 'q');
  void* p = d.allocate(host.size());
  NodeGraph g("traced-device");
  auto& upload = g.emplace_async([&](AsyncDone done) {
    Stream& s = d.copy_stream(CopyDirection::host_to_device);
    d.copy_async(p, host.data(), host.size(), CopyDirection::host_to_device, s);
    s.then([done] { done.complete(); });
  }).name("upload").kind(ExecKind::gpu);
  auto& kernel = g.emplace_async([&](AsyncDone done) {
    Stream& s = d.compute_stream(0);
    s.enqueue_host([&] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }, "kernel");
    s.then([done] { done.complete(); });
  }).name("launch").kind(ExecKind::gpu);
  upload.precede(kernel);
  ex.start_trace();
  ex.run(g).get();
  Trace t = ex.stop_trace();
  auto track_of = [&](const std::string& event) -> std::string {
    for (auto& e : t.events)
      if (e.name == event) return t.tracks.at(e.track);
    return "(none)";
  };
  EXPECT_EQ(track_of("copy h2d 1.0 MiB"), "sim:0/h2d");
  EXPECT_EQ(track_of("kernel"), "sim:0/compute0");
  // The nodes that launched the work ran on worker tracks.
  EXPECT_EQ(track_of("launch").rfind("worker", 0), 0u) << track_of("launch");
  EXPECT_EQ(track_of("upload").rfind("worker", 0), 0u) << track_of("upload");
  for (auto& e : t.events) EXPECT_LE(e.begin_ns, e.end_ns);
  // Nothing is timed once the trace stopped.
  d.compute_stream(0).enqueue_host([] {}, "after");
  d.synchronize();
  ex.start_trace();
  Trace empty = ex.stop_trace();
  for (auto& e : empty.events) EXPECT_NE(e.name, "after");
  d.deallocate(p, host.size());
}
