#pragma once
// What an Event points to: a flag that turns on once, with a way to wait for it, and optionally
// the backend's own event recorded at the same point.

#include <condition_variable>
#include <memory>
#include <mutex>

namespace tessera::detail {

struct EventState {
  std::mutex mutex;
  std::condition_variable became_ready;
  bool ready = false;
  // A cudaEvent_t recorded at the same point in a CUDA stream, so that other CUDA streams wait
  // on the device rather than on the flag. Only the CUDA backend sets it, before the Event is
  // handed out. Opaque here so that host and sim code need no CUDA headers; its deleter gives
  // the event back to the pool that made it, which outlives the device if an Event does.
  std::shared_ptr<void> native;

  void set() {
    {
      std::lock_guard lock(mutex);
      ready = true;
    }
    became_ready.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex);
    became_ready.wait(lock, [this] { return ready; });
  }
  bool is_ready() {
    std::lock_guard lock(mutex);
    return ready;
  }
};

}  // namespace tessera::detail
