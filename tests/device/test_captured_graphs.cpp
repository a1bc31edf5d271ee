// Captured graphs (NodeGraph::capture): from the second run after a change, the device part is
// recorded once per part and replayed; host nodes still run every time between the parts they
// separate. Each test compares against the same graph run without capture, and counts how often
// bodies ran, so a replay that skipped the device work, ran stale work, or re-ran bodies fails.
#include <tessera/core/error.hpp>
#include <tessera/device/capture.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace tessera;

namespace {

ExecutorOptions for_devices(std::size_t n) {
  ExecutorOptions o;
  o.num_devices = n;
  return o;
}

// State that device work updates in place each run; only the streams' threads touch `a`/`b`
// while a run is in flight (the graph's edges order them), the host nodes touch `log`.
struct State {
  std::vector<double> a = std::vector<double>(64, 1.0);
  std::vector<double> b = std::vector<double>(64, 2.0);
  std::vector<double> log;  // a host node's view of the device results, once per run
  std::atomic<int> bodies{0};
};

// Two sim devices, three streams: a -> (b on another device, waits on the device) -> c, a host
// node after them that logs, and a host node before a second device part that reads the log.
void build(NodeGraph& g, State& st, Device& d0, Device& d1) {
  Stream& s0 = d0.compute_stream(0);
  Stream& s1 = d1.compute_stream(0);
  Stream& s2 = d1.compute_stream(d1.num_compute_streams() > 1 ? 1 : 0);
  auto& scale = g.emplace_on(s0, [&st](Stream& s) {
                   ++st.bodies;
                   s.enqueue_host(
                       [&st] {
                         for (double& x : st.a) x = x * 0.5 + 1.0;
                       },
                       "scale");
                 }).name("scale");
  auto& mix = g.emplace_on(s1, [&st](Stream& s) {
                 ++st.bodies;
                 s.enqueue_host(
                     [&st] {
                       for (std::size_t i = 0; i < st.b.size(); ++i) st.b[i] = st.b[i] * 0.25 + st.a[i];
                     },
                     "mix");
               }).name("mix");
  auto& shift = g.emplace_on(s2, [&st](Stream& s) {
                   ++st.bodies;
                   s.enqueue_host(
                       [&st] {
                         for (std::size_t i = 0; i < st.a.size(); ++i) st.a[i] += 1e-3 * static_cast<double>(i);
                       },
                       "shift");
                 }).name("shift");
  auto& log = g.emplace([&st] { st.log.push_back(std::accumulate(st.b.begin(), st.b.end(), 0.0)); }).name("log");
  auto& again = g.emplace_on(s0, [&st](Stream& s) {
                   ++st.bodies;
                   s.enqueue_host([&st] { st.b[0] = st.log.back(); }, "feed back");
                 }).name("feed back");
  scale.precede(mix);
  mix.precede(shift);
  shift.precede(log);
  log.precede(again);
}

std::vector<double> run_graph(bool capture, std::size_t runs, int* bodies = nullptr,
                              std::size_t* recordings = nullptr) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Executor ex(for_devices(2));
  State st;
  NodeGraph g("captured");
  build(g, st, devices.accelerator(0), devices.accelerator(1));
  g.capture(capture);
  ex.run_n(g, runs).get();
  if (bodies) *bodies = st.bodies.load();
  if (recordings) *recordings = g.recordings();
  std::vector<double> out = st.log;
  out.insert(out.end(), st.a.begin(), st.a.end());
  out.insert(out.end(), st.b.begin(), st.b.end());
  return out;
}

}  // namespace

TEST(CapturedGraphs, ReplaysGiveTheSameBitsAsRunningEveryNode) {
  int bodies = 0;
  std::size_t recordings = 0;
  const std::vector<double> plain = run_graph(false, 12);
  const std::vector<double> captured = run_graph(true, 12, &bodies, &recordings);
  ASSERT_EQ(plain.size(), captured.size());
  for (std::size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(plain[i], captured[i]) << "value " << i;
  // Two parts (before and after the host node), recorded once each at the second run: bodies
  // ran in run 1 and while recording in run 2, never again.
  EXPECT_EQ(recordings, 2u);
  EXPECT_EQ(bodies, 2 * 4);
}

TEST(CapturedGraphs, SplitsAtHostNodesSoTheyStillRunEveryTime) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Executor ex(for_devices(2));
  State st;
  NodeGraph g("split");
  build(g, st, devices.accelerator(0), devices.accelerator(1));
  g.capture();
  ex.run_n(g, 5).get();
  EXPECT_EQ(st.log.size(), 5u);  // the host node ran in every run, replays included
  EXPECT_TRUE(g.capture_refusal().empty()) << g.capture_refusal();
}

TEST(CapturedGraphs, AChangedGraphIsRecordedAgainNeverReplayedStale) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::vector<std::int64_t> v(16, 1);
  NodeGraph g("grows");
  g.capture();
  auto& add = g.emplace_on(s, [&v](Stream& st) {
                 st.enqueue_host(
                     [&v] {
                       for (auto& x : v) x += 1;
                     },
                     "add");
               }).name("add");
  ex.run_n(g, 4).get();  // 1 plain, 1 recorded, 2 replayed: 1 + 4
  EXPECT_EQ(v[3], 5);
  EXPECT_EQ(g.recordings(), 1u);
  // A new node: the old recording has no doubling in it. Replaying it would give 5+3 = 8.
  auto& twice = g.emplace_on(s, [&v](Stream& st) {
                   st.enqueue_host(
                       [&v] {
                         for (auto& x : v) x *= 2;
                       },
                       "double");
                 }).name("double");
  add.precede(twice);
  ex.run_n(g, 3).get();  // ((5+1)*2+1)*2 = 26, then (26+1)*2 = 54
  EXPECT_EQ(v[3], 54);
  EXPECT_EQ(g.recordings(), 2u);
  auto& minus = g.emplace_on(s, [&v](Stream& st) {
                   st.enqueue_host(
                       [&v] {
                         for (auto& x : v) x -= 3;
                       },
                       "minus");
                 }).name("minus");
  twice.precede(minus);
  ex.run_n(g, 2).get();  // (54+1)*2-3 = 107, then (107+1)*2-3 = 213
  EXPECT_EQ(v[3], 213);
  EXPECT_EQ(g.recordings(), 3u);
  // A host node after the device part: the part is recorded again, and the host node sees each
  // run's result.
  std::vector<std::int64_t> seen;
  auto& check = g.emplace([&] { seen.push_back(v[3]); }).name("check");
  minus.precede(check);
  ex.run_n(g, 2).get();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{(213 + 1) * 2 - 3, ((213 + 1) * 2 - 3 + 1) * 2 - 3}));
  EXPECT_EQ(g.recordings(), 4u);
}

TEST(CapturedGraphs, RecaptureTakesNewArgumentsWithoutChangingTheGraph) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  double factor = 2.0;
  double x = 1.0;
  NodeGraph g("argument");
  g.capture();
  // The body reads `factor` when it enqueues: a recording keeps the value it saw.
  g.emplace_on(s, [&](Stream& st) { st.enqueue_host([&x, f = factor] { x *= f; }, "scale"); }).name("scale");
  ex.run_n(g, 3).get();
  EXPECT_EQ(x, 8.0);
  factor = 3.0;
  ex.run(g).get();
  EXPECT_EQ(x, 16.0) << "without recapture() the recording keeps the old argument (the documented promise)";
  g.recapture();
  ex.run_n(g, 2).get();
  EXPECT_EQ(x, 144.0);
  EXPECT_EQ(g.recordings(), 2u);
}

TEST(CapturedGraphs, WorkThatThrowsOnReplayFailsTheRunNamingItsNode) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  int calls = 0;
  NodeGraph g("fails");
  g.capture();
  auto& ok = g.emplace_on(s, [](Stream& st) { st.enqueue_host([] {}, "fine"); }).name("fine");
  auto& bad = g.emplace_on(s, [&calls](Stream& st) {
                 st.enqueue_host(
                     [&calls] {
                       if (++calls == 4) throw std::runtime_error("lost the device at call 4");
                     },
                     "flaky");
               }).name("flaky");
  ok.precede(bad);
  try {
    ex.run_n(g, 6).get();
    FAIL() << "the replayed failure did not reach the future";
  } catch (const NodeError& e) {
    EXPECT_EQ(e.node_name(), "flaky");
    EXPECT_NE(std::string(e.what()).find("lost the device at call 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 4);  // the run stopped at the failing iteration
}

TEST(CapturedGraphs, ABodyThatThrowsWhileRecordingFailsTheRunAndRecordsAgainNextTime) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex(for_devices(1));
  Stream& s = devices.accelerator(0).compute_stream(0);
  int bodies = 0;
  int work = 0;
  NodeGraph g("record-fails");
  g.capture();
  g.emplace_on(s, [&](Stream& st) {
     if (++bodies == 2) throw Error("no kernel for this shape");
     st.enqueue_host([&work] { ++work; }, "work");
   }).name("launch");
  try {
    ex.run_n(g, 3).get();
    FAIL() << "expected the recording's failure";
  } catch (const NodeError& e) {
    EXPECT_EQ(e.node_name(), "launch");
  }
  EXPECT_EQ(work, 1);    // run 1 ran; run 2's recording was dropped, none of it ran
  ex.run_n(g, 3).get();  // records again (run counts continue), then replays
  EXPECT_EQ(work, 4);
  EXPECT_EQ(g.recordings(), 1u);
}

TEST(CapturedGraphs, StreamsThatCannotRecordRunUncapturedAndSayWhy) {
  auto devices = DeviceSet::select("host");
  Executor ex(for_devices(0));
  int work = 0;
  NodeGraph g("host-streams");
  g.capture();
  g.emplace_on(devices.host().compute_stream(0), [&work](Stream& st) {
     st.enqueue_host([&work] { ++work; }, "w");
   }).name("on host");
  ex.run_n(g, 3).get();
  EXPECT_EQ(work, 3);
  EXPECT_NE(g.capture_refusal().find("on host"), std::string::npos) << g.capture_refusal();
  EXPECT_EQ(g.recordings(), 0u);
}

TEST(CapturedGraphs, ReplaysWithManyIndependentPartsAndRunUntil) {
  auto devices = DeviceSet::select("sim:3:16MiB");
  Executor ex(for_devices(3));
  constexpr int parts = 6;
  std::vector<std::int64_t> sums(parts, 0);
  NodeGraph g("parts");
  g.capture();
  for (int p = 0; p < parts; ++p) {
    Stream& s = devices.accelerator(static_cast<std::size_t>(p % 3)).compute_stream(0);
    auto& a = g.emplace_on(s, [&sums, p](Stream& st) { st.enqueue_host([&sums, p] { sums[p] += p + 1; }, "add"); });
    auto& b = g.emplace_on(s, [&sums, p](Stream& st) { st.enqueue_host([&sums, p] { sums[p] *= 2; }, "double"); });
    a.precede(b);
  }
  int runs = 0;
  ex.run_until(g, [&] { return runs++ == 10; }).get();
  for (int p = 0; p < parts; ++p) {
    std::int64_t expect = 0;
    for (int r = 0; r < 10; ++r) expect = (expect + p + 1) * 2;
    EXPECT_EQ(sums[p], expect) << "part " << p;
  }
}

// The building block on its own: what a launch loop without an executor sees.
TEST(CapturedGraphs, AStreamCaptureLaunchesItsRecordingAcrossStreams) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Stream& a = devices.accelerator(0).compute_stream(0);
  Stream& b = devices.accelerator(1).compute_stream(0);
  std::vector<int> order;
  std::mutex m;
  auto note = [&](int k) {
    std::lock_guard lock(m);
    order.push_back(k);
  };
  Stream* others[] = {&b};
  std::unique_ptr<StreamCapture> capture = a.begin_capture(others);
  capture->label("first");
  a.enqueue_host([&] { note(1); }, "one");
  Event e = a.record();
  b.wait(e);
  capture->label("second");
  b.enqueue_host([&] { note(2); }, "two");
  std::unique_ptr<CapturedWork> work = capture->finish(nullptr);
  EXPECT_TRUE(order.empty());  // recorded, not run
  for (int i = 0; i < 3; ++i) work->launch();
  a.enqueue_host([&] { note(3); }, "after");  // after all of every launch, b's part included
  a.synchronize();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 1, 2, 1, 2, 3}));
  std::string label;
  EXPECT_EQ(work->take_error(label), nullptr);
}

TEST(CapturedGraphs, AStreamCannotRecordForTwoCapturesAtOnce) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& a = devices.accelerator(0).compute_stream(0);
  auto first = a.begin_capture({});
  try {
    auto second = a.begin_capture({});
    FAIL() << "a second capture of one stream was allowed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another capture"), std::string::npos) << e.what();
  }
  first.reset();  // dropped unfinished: the stream runs work again
  int ran = 0;
  a.enqueue_host([&] { ++ran; }, "after");
  a.synchronize();
  EXPECT_EQ(ran, 1);
}

// The example of docs/devices.md: keep the text between the DOC markers identical to the docs.
TEST(CapturedGraphs, DocExample) {
  // clang-format off
  // DOC captured-graph begin
  auto devices = tessera::DeviceSet::select("sim:1:64MiB");
  tessera::ExecutorOptions options;
  options.num_devices = 1;
  tessera::Executor ex(options);
  tessera::Stream& s = devices.accelerator(0).compute_stream(0);
  std::vector<double> u(1024, 1.0);
  double total = 0.0;

  tessera::NodeGraph step("step");
  auto& relax = step.emplace_on(s, [&](tessera::Stream& st) {
    st.enqueue_host([&] { for (double& x : u) x = 0.5 * x + 1.0; }, "relax");
  }).name("relax");
  auto& sum = step.emplace([&] { total = std::accumulate(u.begin(), u.end(), 0.0); }).name("sum");
  relax.precede(sum);
  step.capture();             // a promise: device nodes enqueue the same work every run
  ex.run_n(step, 100).get();  // run 1 as usual, run 2 records, runs 3-100 replay
  // step.recordings() == 1, and `sum` ran after every run: total == 1024 * (2 - 2^-100)
  // DOC captured-graph end
  // clang-format on
  EXPECT_EQ(step.recordings(), 1u);
  EXPECT_DOUBLE_EQ(total, 2048.0);
}
