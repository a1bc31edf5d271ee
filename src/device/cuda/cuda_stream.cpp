#include "cuda_stream.hpp"

#include "../../core/log_internal.hpp"
#include "../event_state.hpp"
#include "cuda_check.hpp"

#include <tessera/device/device.hpp>

#include <exception>

namespace tessera::detail {

namespace {

struct HostWork {
  std::function<void()> work;
  std::string label;
  const Stream* stream;
};

void CUDART_CB run_host_work(void* data) {
  std::unique_ptr<HostWork> item(static_cast<HostWork*>(data));
  try {
    item->work();
  } catch (const std::exception& e) {
    // Unwinding into the CUDA runtime's thread would terminate the process; like a sim stream,
    // the stream drops the work and goes on (layers above route kernel errors to their node).
    log_error("{} on stream {} threw and was dropped: {}", item->label, item->stream->name(), e.what());
  } catch (...) {
    log_error("{} on stream {} threw a non-std exception and was dropped", item->label, item->stream->name());
  }
}

// A failed query or wait reports the error and counts as done: the stream's work will not
// complete, and a waiter must not hang on it (the failure surfaces at the next checked call).
bool cuda_event_done(void* event) noexcept {
  const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (r == cudaErrorNotReady) return false;
  if (r != cudaSuccess) log_error("querying a CUDA event failed: {}", cudaGetErrorString(r));
  return true;
}

void cuda_event_wait(void* event) noexcept {
  if (const cudaError_t r = cudaEventSynchronize(static_cast<cudaEvent_t>(event)); r != cudaSuccess)
    log_error("waiting on a CUDA event failed: {}", cudaGetErrorString(r));
}

}  // namespace

CudaStream::CudaStream(Device* device, StreamRole role, std::string name, std::shared_ptr<CudaEventPool> events)
    : Stream(device, role, std::move(name)), events_(std::move(events)) {
  CudaDeviceScope scope(device->ordinal());
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             [&] { return "creating CUDA stream " + this->name(); });
}

CudaStream::~CudaStream() {
  CudaDeviceScope scope(device().ordinal(), std::nothrow);
  cudaError_t err = cudaStreamSynchronize(stream_);
  (void)take_retained(true);
  if (err == cudaSuccess) err = cudaStreamDestroy(stream_);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    log_error("stream {}: finishing and destroying it failed: {}", name(), cudaGetErrorString(err));
  }
}

void CudaStream::launch_host(std::function<void()> work, std::string label) {
  auto item = std::make_unique<HostWork>(HostWork{std::move(work), std::move(label), this});
  CudaDeviceScope scope(device().ordinal());
  cuda_check(cudaLaunchHostFunc(stream_, run_host_work, item.get()),
             [&] { return "enqueueing host " + item->label + " on stream " + name(); });
  (void)item.release();  // run_host_work owns it now
}

void CudaStream::enqueue_host(std::function<void()> work, std::string label) {
  launch_host(std::move(work), std::move(label));
}

void CudaStream::then(std::function<void()> callback) { launch_host(std::move(callback), "callback"); }

void CudaStream::retain(std::shared_ptr<const void> object) {
  CudaDeviceScope scope(device().ordinal());
  // The caller may hold a Buffer's lock, and dropping the last reference to another Buffer takes
  // the memory core's: so what is done is dropped in a host function (no locks held there, as
  // before retain existed), one per batch rather than one per call.
  bool reap = false;
  {
    std::lock_guard lock(retained_mutex_);
    reap = retained_.size() >= 64;
  }
  if (reap) {
    auto done = std::make_shared<std::vector<std::shared_ptr<const void>>>(take_retained(false));
    if (!done->empty()) launch_host([done] { done->clear(); }, "release");
  }
  std::shared_ptr<void> event = events_->acquire();
  cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event.get()), stream_),
             [&] { return "recording a CUDA event on stream " + name(); });
  std::lock_guard lock(retained_mutex_);
  retained_.push_back({std::move(event), std::move(object)});
}

std::vector<std::shared_ptr<const void>> CudaStream::take_retained(bool all) noexcept {
  std::vector<std::shared_ptr<const void>> done;
  std::lock_guard lock(retained_mutex_);
  // Events complete in stream order: stop at the first that is not done.
  while (!retained_.empty() &&
         (all || cudaEventQuery(static_cast<cudaEvent_t>(retained_.front().event.get())) == cudaSuccess)) {
    try {
      done.push_back(std::move(retained_.front().object));
    } catch (...) {
      break;  // no room to move it out: it stays until a later call
    }
    retained_.pop_front();
  }
  return done;
}

void CudaStream::drop_retained() noexcept {
  // After a synchronize everything retained before it is done; what other threads retained
  // meanwhile may not be, so each event is still asked.
  (void)take_retained(false);
}

void CudaStream::record_into(std::shared_ptr<EventState> state) {
  CudaDeviceScope scope(device().ordinal());
  std::shared_ptr<void> event = events_->acquire();
  cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event.get()), stream_),
             [&] { return "recording a CUDA event on stream " + name(); });
  // Set before the Event leaves Stream::record(), so readers on other threads need no lock.
  state->native = std::move(event);
  state->native_done = cuda_event_done;
  state->native_wait = cuda_event_wait;
}

void CudaStream::wait(const Event& e) {
  std::shared_ptr<EventState> state = state_of(e);
  if (state->is_ready()) return;  // everything before it has run: nothing to order after
  CudaDeviceScope scope(device().ordinal());
  if (state->native) {
    // Device-side: the GPU holds this stream's later work; another GPU's event is fine too.
    cuda_check(cudaStreamWaitEvent(stream_, static_cast<cudaEvent_t>(state->native.get()), 0),
               [&] { return "stream " + name() + " waiting on a CUDA event"; });
    return;
  }
  // An event of a non-CUDA stream that is not ready yet: only a simulated device makes those
  // (host streams finish before record() returns), and a DeviceSet never mixes sim and CUDA
  // devices, so this is a test set-up, never the hot path. The host function blocks a CUDA
  // runtime thread, not an executor worker; CUDA may serialise host functions of all streams
  // behind it, so the awaited event must not depend on a later CUDA host function.
  launch_host([s = std::move(state)] { s->wait(); }, "wait");
}

}  // namespace tessera::detail
