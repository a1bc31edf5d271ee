#include "sim_stream.hpp"

#include "../../core/log_internal.hpp"
#include "../event_state.hpp"

#include <exception>

namespace tessera::detail {

SimStream::SimStream(Device* device, StreamRole role, std::string name)
    : Stream(device, role, std::move(name)), thread_([this] { run(); }) {}

SimStream::~SimStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  has_work_.notify_all();
  thread_.join();
}

void SimStream::enqueue_host(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  has_work_.notify_one();
}

void SimStream::record_into(std::shared_ptr<EventState> state) {
  enqueue_host([s = std::move(state)] { s->set(); });
}

void SimStream::wait(const Event& e) {
  // The stream's thread blocks, not the caller: the device-side wait of a real GPU.
  enqueue_host([s = state_of(e)] { s->wait(); });
}

void SimStream::then(std::function<void()> callback) { enqueue_host(std::move(callback)); }

void SimStream::run() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mutex_);
      has_work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      work();
    } catch (const std::exception& e) {
      // A real device has no one to throw to either; the layers above route kernel errors to
      // the node that launched them before they get here.
      log_error("work on stream {} threw and was dropped: {}", name(), e.what());
    } catch (...) {
      log_error("work on stream {} threw a non-std exception and was dropped", name());
    }
  }
}

}  // namespace tessera::detail
