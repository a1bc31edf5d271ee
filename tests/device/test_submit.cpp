// tessera::submit, the one device submission path: work is enqueued in stream order after the
// events it must follow, completion comes from the stream once the work has run, and a failure
// while enqueuing drains what was enqueued before it is reported, with no completion call.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/device/submit.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace tessera;

TEST(Submit, CompletionComesAfterTheWorkHasRun) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::atomic<int> ran{0};
  std::promise<int> completed;
  Event done = submit(s, {}, [&](Stream& st) {
    st.enqueue_host([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ran.store(1);
    }, "slow work");
  }, [&] { completed.set_value(ran.load()); });
  std::future<int> f = completed.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "on_complete never ran";
  EXPECT_EQ(f.get(), 1) << "on_complete ran before the work it completes";
  done.synchronize();
  EXPECT_TRUE(done.ready());
}

TEST(Submit, WaitsOnTheDeviceForEventsOfOtherStreams) {
  auto devices = DeviceSet::select("sim:2:16MiB");
  Stream& a = devices.accelerator(0).compute_stream(0);
  Stream& b = devices.accelerator(1).compute_stream(0);
  for (int round = 0; round < 5; ++round) {
    std::vector<int> log;  // written by a's thread, then by b's, never at once
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<bool> released{false};
    Event first = submit(a, {}, [&](Stream& st) {
      st.enqueue_host([&, gate] {
        released.store(gate.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
        log.push_back(1);
      }, "first");
    });
    const Event* after[] = {&first};
    Event second = submit(b, after, [&](Stream& st) { st.enqueue_host([&] { log.push_back(2); }, "second"); });
    release.set_value();  // only now may `first` finish: had submit waited for it here, it would have timed out
    second.synchronize();
    EXPECT_TRUE(released.load()) << "submit waited on the host for an event the stream was to wait for";
    EXPECT_EQ(log, (std::vector<int>{1, 2})) << "round " << round;
  }
}

TEST(Submit, AFailureDrainsWhatWasEnqueuedAndSkipsCompletion) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::atomic<bool> drained{false}, completed{false};
  try {
    submit(s, {}, [&](Stream& st) {
      st.enqueue_host([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        drained.store(true);
      }, "enqueued before the failure");
      throw Error("launch refused");
    }, [&] { completed.store(true); });
    FAIL() << "submit returned after its enqueue threw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "launch refused");
    EXPECT_TRUE(drained.load()) << "submit reported the failure while enqueued work could still run";
  }
  s.synchronize();
  EXPECT_FALSE(completed.load()) << "on_complete ran for work that failed to submit";
}

TEST(Submit, AnEmptySubmissionStillCompletesInStreamOrder) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::atomic<bool> earlier_ran{false};
  s.enqueue_host([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    earlier_ran.store(true);
  }, "queued earlier");
  std::promise<bool> completed;  // whether the earlier work had run when completion came
  Event e = submit(s, {}, [](Stream&) {}, [&] { completed.set_value(earlier_ran.load()); });
  std::future<bool> f = completed.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "no completion for empty work";
  EXPECT_TRUE(f.get()) << "an empty submission completed before the work queued ahead of it";
  EXPECT_TRUE(e.ready());
}

TEST(Submit, DocsExample) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& stream = devices.accelerator(0).compute_stream(0);
  std::atomic<int> sum{0};
  std::latch done(1);
  // DOC submit begin
  tessera::Event e = tessera::submit(stream, {}, [&](tessera::Stream& s) {
    s.enqueue_host([&] { sum += 42; }, "kernel");  // a sim device runs it on its stream's thread
  }, [&] { done.count_down(); });
  // DOC submit end
  done.wait();
  e.synchronize();
  EXPECT_EQ(sum.load(), 42);
}

// A trace label only names the work in traces (a CUDA stream brackets it with timing events);
// on host and sim streams, which time each item they run, it changes nothing, traced or not.
TEST(Submit, ATraceLabelChangesNothingOnHostOrSimStreams) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Executor ex;
  for (Stream* s : {&devices.host().compute_stream(0), &devices.accelerator(0).compute_stream(0)}) {
    for (bool traced : {false, true}) {
      if (traced) ex.start_trace();
      std::atomic<int> sum{0};
      std::promise<void> completed;
      Event e = submit(*s, {}, [&](Stream& st) { st.enqueue_host([&] { sum += 42; }, "labelled work"); },
                       [&] { completed.set_value(); }, "scale node");
      ASSERT_EQ(completed.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready) << s->name();
      e.synchronize();
      EXPECT_EQ(sum.load(), 42) << s->name();
      if (!traced) continue;
      Trace t = ex.stop_trace();
      if (s->device().kind() != DeviceKind::sim) continue;  // host streams run work at once, untraced
      bool on_stream_track = false;
      for (const TraceEvent& ev : t.events)
        on_stream_track = on_stream_track || (ev.name == "labelled work" && t.tracks.at(ev.track) == s->name());
      EXPECT_TRUE(on_stream_track) << "the sim stream's own slice is missing from " << s->name() << "'s track";
    }
  }
  // A failed labelled submission still reports its error and leaves the stream usable.
  Stream& s = devices.accelerator(0).compute_stream(0);
  EXPECT_THROW(submit(s, {}, [](Stream&) { throw Error("launch refused"); }, {}, "failing node"), Error);
  std::atomic<bool> ran{false};
  submit(s, {}, [&](Stream& st) { st.enqueue_host([&] { ran.store(true); }, "after"); }, {}, "next node")
      .synchronize();
  EXPECT_TRUE(ran.load());
}
