#pragma once
// What an Event points to: a flag that turns on once, with a way to wait for it, and optionally
// the backend's own event recorded at the same point.

#include <condition_variable>
#include <memory>
#include <mutex>

namespace tessera {
class Stream;
}

namespace tessera::detail {

struct EventState {
  std::mutex mutex;
  std::condition_variable became_ready;
  bool ready = false;
  // The stream it was recorded on (null for an Event made ready). A recording that waited on an
  // event from outside it waits, on each replay, for that stream's latest work instead.
  Stream* source = nullptr;
  // A cudaEvent_t recorded at the same point in a CUDA stream, so that other CUDA streams wait
  // on the device rather than on the flag. Only the CUDA backend sets it, before the Event is
  // handed out. Opaque here so that host and sim code need no CUDA headers; its deleter gives
  // the event back to the pool that made it, which outlives the device if an Event does.
  std::shared_ptr<void> native;
  // Set with `native` by the CUDA backend: readiness is then asked of the GPU (a query, or a
  // blocking wait) instead of a host flag that a host function in the stream would have to set;
  // each such host function costs a round trip that the stream's later work waits behind.
  bool (*native_done)(void*) noexcept = nullptr;
  void (*native_wait)(void*) noexcept = nullptr;

  void set() {
    {
      std::lock_guard lock(mutex);
      ready = true;
    }
    became_ready.notify_all();
  }
  void wait() {
    if (native_wait != nullptr) {
      if (is_ready()) return;
      native_wait(native.get());
      set();
      return;
    }
    std::unique_lock lock(mutex);
    became_ready.wait(lock, [this] { return ready; });
  }
  bool is_ready() {
    {
      std::lock_guard lock(mutex);
      if (ready || native_done == nullptr) return ready;
    }
    if (!native_done(native.get())) return false;
    set();
    return true;
  }
};

}  // namespace tessera::detail
