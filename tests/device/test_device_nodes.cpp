// Device nodes (NodeGraph::emplace_on): work enqueued on a stream, completion through the
// stream's event; device successors are released when the work is enqueued (same stream: stream
// order; other stream or device: a device-side wait), CPU successors when the work has run.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <vector>

using namespace tessera;

namespace {

ExecutorOptions for_devices(std::size_t n) {
  ExecutorOptions o;
  o.num_devices = n;
  return o;
}

}  // namespace

TEST(DeviceNodes, SameStreamChainFollowsInStreamOrderAndCpuSuccessorSeesTheResult) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::vector<int> device_log;  // touched only by the stream's thread, then by the CPU successor
  std::vector<int> seen;
  NodeGraph g("chain");
  Node* prev = nullptr;
  for (int i = 0; i < 8; ++i) {
    auto& n = g.emplace_on(s, [&device_log, i](Stream& st) {
      st.enqueue_host([&device_log, i] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        device_log.push_back(i);
      }, "step");
    });
    if (prev) prev->precede(n);
    prev = &n;
  }
  g.emplace([&] { seen = device_log; }).succeed(*prev);
  for (int run = 0; run < 3; ++run) {
    device_log.clear();
    ex.run(g).get();
    ASSERT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7})) << "run " << run;
  }
}

// The consumer on another device is issued while the producer's work is still running: the
// producer's work only finishes once the consumer's body has run. An executor that waited on
// the host for the producer's event before issuing the consumer would never get there.
TEST(DeviceNodes, SuccessorOnAnotherDeviceIsIssuedBeforeThePredecessorFinishesAndWaitsOnTheDevice) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Executor ex(for_devices(2));
  Stream& a = devices.accelerator(0).compute_stream(0);
  Stream& b = devices.accelerator(1).compute_stream(1);
  std::promise<void> consumer_issued;
  std::shared_future<void> gate = consumer_issued.get_future().share();
  std::atomic<int> value{0};
  bool producer_saw_gate = false;
  int consumer_read = -1;
  int cpu_read = -1;
  NodeGraph g("cross-device");
  auto& produce = g.emplace_on(a, [&](Stream& st) {
    st.enqueue_host([&, gate] {
      producer_saw_gate = gate.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
      value.store(41);
    }, "produce");
  }).name("produce");
  auto& consume = g.emplace_on(b, [&](Stream& st) {
    consumer_issued.set_value();
    st.enqueue_host([&] { consumer_read = value.load() + 1; }, "consume");
  }).name("consume");
  auto& check = g.emplace([&] { cpu_read = consumer_read; }).name("check");
  produce.precede(consume);
  consume.precede(check);
  ex.run(g).get();
  EXPECT_TRUE(producer_saw_gate);
  EXPECT_EQ(consumer_read, 42);
  EXPECT_EQ(cpu_read, 42);
}

// 10 000 nodes, a quarter of them device nodes spread over 4 devices x 2 compute streams, with
// random edges: every node's work (on a stream or a worker) runs after all its predecessors'.
TEST(DeviceNodes, RandomDagOnFourSimDevicesRespectsEveryDependency) {
  auto devices = DeviceSet::select("sim:4:16MiB");
  Executor ex(for_devices(4));
  const std::size_t n = 10000;
  NodeGraph g("device-dag");
  std::atomic<std::uint64_t> clock{0};
  std::vector<std::atomic<std::uint64_t>> stamp(n);
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng() % 4 == 0) {
      Stream& s = devices.accelerator(rng() % 4).compute_stream(rng() % 2);
      g.emplace_on(s, [&, i](Stream& st) { st.enqueue_host([&, i] { stamp[i].store(clock.fetch_add(1) + 1); }); });
    } else {
      g.emplace([&, i] { stamp[i].store(clock.fetch_add(1) + 1); });
    }
  }
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t k = rng() % 4; k > 0; --k) {
      std::size_t from = i - 1 - rng() % std::min<std::size_t>(i, 64);  // mostly near: long dependent chains
      g.node(from).precede(g.node(i));
      edges.emplace_back(from, i);
    }
  for (int run = 0; run < 5; ++run) {
    for (auto& s : stamp) s.store(0);
    ex.run(g).get();
    for (auto& s : stamp) ASSERT_GT(s.load(), 0u) << "run " << run;
    for (auto [a, b] : edges) ASSERT_LT(stamp[a].load(), stamp[b].load()) << "edge " << a << " -> " << b;
  }
}

TEST(DeviceNodes, RunNRepeatsDeviceWorkAndTheFutureWaitsForIt) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Executor ex(for_devices(2));
  std::atomic<int> count{0};
  NodeGraph g("repeat");
  auto& a = g.emplace_on(devices.accelerator(0).compute_stream(0), [&](Stream& st) {
    st.enqueue_host([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      count.fetch_add(1);
    });
  });
  auto& b = g.emplace_on(devices.accelerator(1).copy_stream(CopyDirection::host_to_device),
                         [&](Stream& st) { st.enqueue_host([&] { count.fetch_add(10); }); });
  a.precede(b);
  ex.run_n(g, 20).get();
  EXPECT_EQ(count.load(), 220);
}

TEST(DeviceNodes, HostStreamsRunDeviceNodesInlineWhenThereIsNoAccelerator) {
  auto devices = DeviceSet::select("host");
  Executor ex;
  std::vector<int> order;
  NodeGraph g("host-fallback");
  auto& a = g.emplace_on(devices.host().compute_stream(0), [&](Stream& st) { st.enqueue_host([&] { order.push_back(1); }); });
  auto& b = g.emplace([&] { order.push_back(2); });
  auto& c = g.emplace_on(devices.host().compute_stream(0), [&](Stream& st) { st.enqueue_host([&] { order.push_back(3); }); });
  a.precede(b);
  b.precede(c);
  ex.run(g).get();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(DeviceNodes, BoundArgumentsFollowTheStream) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  int out = 0;
  NodeGraph g("args");
  g.emplace_on(devices.accelerator(0).compute_stream(1),
               [&out](Stream& st, int x, int y) { st.enqueue_host([&out, x, y] { out = x * y; }); }, 6, 7);
  ex.run(g).get();
  EXPECT_EQ(out, 42);
}

TEST(DeviceNodes, ThrowingBodyReachesTheFutureWithTheNodeNameAndSkipsSuccessors) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::atomic<bool> enqueued_ran{false};
  bool successor_ran = false;
  NodeGraph g("fails");
  auto& bad = g.emplace_on(s, [&](Stream& st) {
    st.enqueue_host([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      enqueued_ran = true;
    });
    throw std::runtime_error("launch failed");
  }).name("bad-launch");
  g.emplace([&] { successor_ran = true; }).succeed(bad);
  try {
    ex.run(g).get();
    FAIL() << "no exception";
  } catch (const NodeError& e) {
    EXPECT_NE(std::string(e.what()).find("bad-launch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("launch failed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(enqueued_ran.load()) << "the future became ready while work the body enqueued was still running";
  EXPECT_FALSE(successor_ran);
  // The executor and the stream stay usable.
  int ok = 0;
  NodeGraph h("after");
  h.emplace_on(s, [&](Stream& st) { st.enqueue_host([&] { ok = 1; }); });
  ex.run(h).get();
  EXPECT_EQ(ok, 1);
}

TEST(DeviceNodes, ADeviceNodeCannotBeMadeCpuKind) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  NodeGraph g("kind");
  auto& n = g.emplace_on(devices.accelerator(0).compute_stream(0), [](Stream&) {}).name("k");
  EXPECT_EQ(n.kind(), ExecKind::gpu);
  EXPECT_EQ(n.stream(), &devices.accelerator(0).compute_stream(0));
  try {
    n.kind(ExecKind::cpu);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sim:0/compute0"), std::string::npos) << e.what();
  }
}

// The example of docs/devices.md: keep the text between the DOC markers identical to the docs.
TEST(DeviceNodes, DocExample) {
  // DOC device-nodes begin
  auto devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::ExecutorOptions options;
  options.num_devices = devices.num_accelerators();  // GPU-priority workers = devices + 1
  tessera::Executor ex(options);
  tessera::MemoryManager memory(devices);  // space 0: host, 1: sim:0, 2: sim:1
  const std::size_t n = 1 << 16;
  tessera::Buffer x(memory, 64, n / 64 * sizeof(float), "x");  // 64 rows of 1024 floats

  tessera::NodeGraph g("pipeline");
  auto& fill = g.emplace([&] {
    auto* h = static_cast<float*>(x.request(tessera::Access::write).get());
    std::fill_n(h, n, 1.0f);
    x.release();
  }).name("fill");
  auto& scale = g.emplace_on(devices.accelerator(0).compute_stream(0), [&](tessera::Stream& s) {
    auto* d = static_cast<float*>(x.prepare(1, s, tessera::Access::read_write));  // copies in first
    s.enqueue_host([d, n] { for (std::size_t i = 0; i < n; ++i) d[i] *= 3.0f; }, "scale");
    x.finish(1, s, tessera::Access::read_write);
  }).name("scale");
  auto& add = g.emplace_on(devices.accelerator(1).compute_stream(0), [&](tessera::Stream& s) {
    auto* d = static_cast<float*>(x.prepare(2, s, tessera::Access::read_write));  // sim:0 -> sim:1
    s.enqueue_host([d, n] { for (std::size_t i = 0; i < n; ++i) d[i] += 1.0f; }, "add");
    x.finish(2, s, tessera::Access::read_write);
  }).name("add");
  float first = 0.0f;
  auto& check = g.emplace([&] {
    first = static_cast<float*>(x.request(tessera::Access::read).get())[0];  // copies back
    x.release();
  }).name("check");
  fill.precede(scale);
  scale.precede(add);  // add is issued as soon as scale is enqueued; sim:1 waits on the device
  add.precede(check);  // check runs once add's work has run
  ex.run(g).get();     // first == 4
  // DOC device-nodes end
  EXPECT_EQ(first, 4.0f);
  const auto moved = memory.stats().transferred;
  EXPECT_EQ(moved.host_to_device, n * sizeof(float));
  EXPECT_EQ(moved.device_to_device, n * sizeof(float));
  EXPECT_EQ(moved.device_to_host, n * sizeof(float));
}
