#include "sim_stream.hpp"

#include "../../core/log_internal.hpp"
#include "../event_state.hpp"
#include "sim_capture.hpp"

#include <tessera/core/error.hpp>

#include <chrono>
#include <ctime>
#include <exception>

namespace tessera::detail {
namespace {

std::chrono::nanoseconds thread_cpu_time() noexcept {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

}  // namespace

SimStream::SimStream(Device* device, StreamRole role, std::string name, double slowdown)
    : Stream(device, role, std::move(name)), slowdown_(slowdown), thread_([this] { run(); }) {
  TraceSources::instance().add(this);
}

SimStream::~SimStream() {
  TraceSources::instance().remove(this);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  has_work_.notify_all();
  thread_.join();
}

void SimStream::push(Item item) {
  bool was_empty = false;
  {
    std::lock_guard lock(mutex_);
    if (capture_ != nullptr) {
      capture_->add_item(*this, std::move(item));
      return;
    }
    was_empty = queue_.empty();
    queue_.push_back(std::move(item));
  }
  // The stream's thread waits only on an empty queue (it takes everything queued at once).
  if (was_empty) has_work_.notify_one();
}

void SimStream::enqueue_host(std::function<void()> work, std::string label) {
  push(Item{std::move(work), std::move(label), slowdown_ > 0.0, false, {}});
}

void SimStream::enqueue_copy(std::function<void()> work, std::string label) {
  push(Item{std::move(work), std::move(label), false, true, {}});
}

void SimStream::enqueue_host_timed(std::function<void()> work, std::string label,
                                   std::function<void(std::chrono::nanoseconds)> took) {
  push(Item{std::move(work), std::move(label), slowdown_ > 0.0, false, std::move(took)});
}

void SimStream::record_into(std::shared_ptr<EventState> state) {
  {
    std::lock_guard lock(mutex_);
    if (capture_ != nullptr) {
      capture_->add_record(*this, std::move(state));
      return;
    }
  }
  push(Item{[s = std::move(state)] { s->set(); }, {}, false, false, {}});
}

void SimStream::wait(const Event& e) {
  {
    std::lock_guard lock(mutex_);
    if (capture_ != nullptr) {
      capture_->add_wait(*this, state_of(e));
      return;
    }
  }
  // The stream's thread blocks, not the caller: the device-side wait of a real GPU.
  push(Item{[s = state_of(e)] { s->wait(); }, "wait", false, false, {}});
}

void SimStream::then(std::function<void()> callback) { push(Item{std::move(callback), {}, false, false, {}}); }

void SimStream::drain(std::vector<TraceEvent>& out) {
  std::lock_guard lock(trace_mutex_);
  for (auto& e : trace_events_) out.push_back(std::move(e));
  trace_events_.clear();
}

void SimStream::run() {
  // Everything queued is taken under one hold of the lock and run in order outside it: an item
  // at a time, the stream's thread and the thread enqueueing the next item took turns at the
  // lock for every item, and waited for each other in the kernel when they met.
  std::deque<Item> taken;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      has_work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      taken.swap(queue_);
    }
    while (!taken.empty()) {
      const std::exception_ptr failure = execute(taken.front());
      taken.pop_front();  // destroyed as soon as it has run, as before
      if (failure) {
        // A real device has no one to throw to either; the layers above route kernel errors to
        // the node that launched them before they get here.
        log_error("work on stream {} threw and was dropped: {}", name(), describe_exception(failure));
      }
    }
  }
}

std::exception_ptr SimStream::execute(const Item& item) {
  // Event records and callbacks (empty labels) take no time worth a slice.
  auto& sources = TraceSources::instance();
  const bool timed = !item.label.empty() && sources.recording();
  const std::uint64_t begin = timed ? sources.now_ns() : 0;
  // Clocks only for work whose time is modelled or asked for: most items are neither.
  const bool clocked = item.modelled || item.took;
  const auto started = clocked ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const std::chrono::nanoseconds cpu_before = item.modelled ? thread_cpu_time() : std::chrono::nanoseconds{};
  std::exception_ptr failure;
  try {
    item.work();
  } catch (...) {
    failure = std::current_exception();
  }
  std::chrono::nanoseconds device_time{};
  if (clocked) device_time = std::chrono::steady_clock::now() - started;
  if (item.modelled) {
    // The work's CPU time, not its wall time, scaled: a host busy with other threads must
    // not slow the device's model further. Asleep, not spinning, so the cores stay free.
    device_time = std::chrono::duration_cast<std::chrono::nanoseconds>((thread_cpu_time() - cpu_before) * slowdown_);
    std::this_thread::sleep_until(started + device_time);
  }
  if (item.took) item.took(device_time);
  if (timed) {
    std::lock_guard lock(trace_mutex_);
    trace_events_.push_back(TraceEvent{item.label, item.copy ? "copy" : "device", 0, begin, sources.now_ns()});
  }
  return failure;
}

}  // namespace tessera::detail
