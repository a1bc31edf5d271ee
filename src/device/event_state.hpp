#pragma once
// What an Event points to: a flag that turns on once, with a way to wait for it.

#include <condition_variable>
#include <mutex>

namespace tessera::detail {

struct EventState {
  std::mutex mutex;
  std::condition_variable became_ready;
  bool ready = false;

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
