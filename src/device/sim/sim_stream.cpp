#include "sim_stream.hpp"

#include "../../core/log_internal.hpp"
#include "../event_state.hpp"

#include <exception>

namespace tessera::detail {

SimStream::SimStream(Device* device, StreamRole role, std::string name)
    : Stream(device, role, std::move(name)), thread_([this] { run(); }) {
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

void SimStream::enqueue_host(std::function<void()> work, std::string label) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Item{std::move(work), std::move(label)});
  }
  has_work_.notify_one();
}

void SimStream::record_into(std::shared_ptr<EventState> state) {
  enqueue_host([s = std::move(state)] { s->set(); }, {});
}

void SimStream::wait(const Event& e) {
  // The stream's thread blocks, not the caller: the device-side wait of a real GPU.
  enqueue_host([s = state_of(e)] { s->wait(); }, "wait");
}

void SimStream::then(std::function<void()> callback) { enqueue_host(std::move(callback), {}); }

void SimStream::drain(std::vector<TraceEvent>& out) {
  std::lock_guard lock(trace_mutex_);
  for (auto& e : trace_events_) out.push_back(std::move(e));
  trace_events_.clear();
}

void SimStream::run() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mutex_);
      has_work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    // Event records and callbacks (empty labels) take no time worth a slice.
    auto& sources = TraceSources::instance();
    const bool timed = !item.label.empty() && sources.recording();
    const std::uint64_t begin = timed ? sources.now_ns() : 0;
    try {
      item.work();
    } catch (const std::exception& e) {
      // A real device has no one to throw to either; the layers above route kernel errors to
      // the node that launched them before they get here.
      log_error("work on stream {} threw and was dropped: {}", name(), e.what());
    } catch (...) {
      log_error("work on stream {} threw a non-std exception and was dropped", name());
    }
    if (timed) {
      const bool copy = item.label.rfind("copy", 0) == 0;
      std::lock_guard lock(trace_mutex_);
      trace_events_.push_back(TraceEvent{std::move(item.label), copy ? "copy" : "device", 0, begin, sources.now_ns()});
    }
  }
}

}  // namespace tessera::detail
