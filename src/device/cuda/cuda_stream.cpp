#include "cuda_stream.hpp"

#include "../../core/log_internal.hpp"
#include "../event_state.hpp"
#include "cuda_capture.hpp"
#include "cuda_check.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <thread>

namespace tessera::detail {

namespace {

struct HostWork {
  std::function<void()> work;
  std::string label;
  const Stream* stream;
};

// Host work and callbacks run on threads that have no one to throw to: unwinding into the CUDA
// runtime's thread would terminate the process. Like a sim stream, the stream drops the work and
// goes on (layers above route kernel errors to their node).
void run_dropping_errors(const std::function<void()>& work, std::string_view label, const Stream& stream) noexcept {
  try {
    work();
  } catch (const std::exception& e) {
    log_error("{} on stream {} threw and was dropped: {}", label, stream.name(), e.what());
  } catch (...) {
    log_error("{} on stream {} threw a non-std exception and was dropped", label, stream.name());
  }
}

void CUDART_CB run_host_work(void* data) {
  std::unique_ptr<HostWork> item(static_cast<HostWork*>(data));
  run_dropping_errors(item->work, item->label, *item->stream);
}

// A host function recorded into a capture runs once per launch: the recording owns the item.
void CUDART_CB run_kept_host_work(void* data) {
  const HostWork* item = static_cast<const HostWork*>(data);
  run_dropping_errors(item->work, item->label, *item->stream);
}

// A failed query or wait reports the error and counts as done: the stream's work will not
// complete, and a waiter must not hang on it (the failure surfaces at the next checked call).
bool cuda_event_done(void* event) noexcept {
  const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (r == cudaErrorNotReady) return false;
  if (r != cudaSuccess) log_error("querying a CUDA event failed: {}", cudaGetErrorString(r));
  return true;
}

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void cuda_event_wait(void* event) noexcept {
  if (const cudaError_t r = cudaEventSynchronize(static_cast<cudaEvent_t>(event)); r != cudaSuccess)
    log_error("waiting on a CUDA event failed: {}", cudaGetErrorString(r));
}

}  // namespace

CudaStream::CudaStream(Device* device, StreamRole role, std::string name, std::shared_ptr<CudaEventPool> events,
                       std::shared_ptr<CudaTraceClock> clock)
    : Stream(device, role, std::move(name)),
      events_(std::move(events)),
      clock_(std::move(clock)),
      completion_events_(CudaEventPool::create(device->ordinal(), this->name(), 0, CudaEventPool::Kind::blocking)) {
  CudaDeviceScope scope(device->ordinal());
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             [&] { return "creating CUDA stream " + this->name(); });
  TraceSources::instance().add(this);
}

CudaStream::~CudaStream() {
  TraceSources::instance().remove(this);
  CudaDeviceScope scope(device().ordinal(), std::nothrow);
  cudaError_t err = cudaStreamSynchronize(stream_);
  stop_completions();
  (void)take_retained(true);
  if (err == cudaSuccess) err = cudaStreamDestroy(stream_);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    log_error("stream {}: finishing and destroying it failed: {}", name(), cudaGetErrorString(err));
  }
}

void CudaStream::launch_host(std::function<void()> work, std::string label) {
  if (CudaCapture* capture = capture_.load(std::memory_order_acquire)) {
    auto item = std::make_shared<const HostWork>(HostWork{std::move(work), std::move(label), this});
    CudaDeviceScope scope(device().ordinal());
    cuda_check(cudaLaunchHostFunc(stream_, run_kept_host_work, const_cast<HostWork*>(item.get())),
               [&] { return "recording host " + item->label + " on stream " + name(); });
    capture->keep(std::move(item));
    return;
  }
  auto item = std::make_unique<HostWork>(HostWork{std::move(work), std::move(label), this});
  CudaDeviceScope scope(device().ordinal());
  cuda_check(cudaLaunchHostFunc(stream_, run_host_work, item.get()),
             [&] { return "enqueueing host " + item->label + " on stream " + name(); });
  (void)item.release();  // run_host_work owns it now
}

void CudaStream::enqueue_host(std::function<void()> work, std::string label) {
  TimingMark mark = start_timing();
  // The label is copied only while tracing: launch_host keeps one for its error messages.
  launch_host(std::move(work), mark ? label : std::move(label));
  finish_timing(std::move(mark), [&] { return std::move(label); }, "device");
}

CudaStream::TimingMark CudaStream::start_timing_slow() noexcept {
  // A timing event recorded into a capture times nothing: replays are traced as the launch.
  if (capture_.load(std::memory_order_acquire) != nullptr) return {};
  try {
    TimingMark mark{clock_->reference(), clock_->acquire()};
    CudaDeviceScope scope(device().ordinal());
    cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(mark.begin.get()), stream_),
               [&] { return "recording a timing event on stream " + name(); });
    return mark;
  } catch (const std::exception& e) {
    log_warn("stream {}: a slice of the trace is left out: {}", name(), e.what());
  } catch (...) {
  }
  return {};
}

void CudaStream::finish_timing(TimingMark mark, FunctionRef<std::string()> label, const char* category) noexcept {
  if (!mark) return;
  try {
    std::shared_ptr<void> end = clock_->acquire();
    {
      CudaDeviceScope scope(device().ordinal());
      cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(end.get()), stream_),
                 [&] { return "recording a timing event on stream " + name(); });
    }
    TimedWork work{std::move(mark), std::move(end), label(), category};
    std::lock_guard lock(trace_mutex_);
    timed_.push_back(std::move(work));
  } catch (const std::exception& e) {
    log_warn("stream {}: a slice of the trace is left out: {}", name(), e.what());
  } catch (...) {
  }
}

void CudaStream::begin_span(std::string_view label) noexcept {
  TimingMark mark = start_timing();
  if (!mark) return;
  try {
    OpenSpan span{std::this_thread::get_id(), std::move(mark), std::string(label)};
    std::lock_guard lock(trace_mutex_);
    open_spans_.push_back(std::move(span));
    open_span_count_.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {  // no room to keep it: the span is left out of the trace
  }
}

void CudaStream::end_span() noexcept {
  // No span open (no trace recording): one load. This thread's own begin_span is always seen.
  if (open_span_count_.load(std::memory_order_relaxed) == 0) return;
  OpenSpan span;
  {
    std::lock_guard lock(trace_mutex_);
    const std::thread::id me = std::this_thread::get_id();
    auto it = std::find_if(open_spans_.rbegin(), open_spans_.rend(), [&](const OpenSpan& s) { return s.thread == me; });
    if (it == open_spans_.rend()) return;  // begun before the trace started recording
    span = std::move(*it);
    open_spans_.erase(std::next(it).base());
    open_span_count_.fetch_sub(1, std::memory_order_relaxed);
  }
  finish_timing(std::move(span.mark), [&] { return std::move(span.label); }, "device");
}

void CudaStream::drain(std::vector<TraceEvent>& out) {
  std::vector<TimedWork> timed;
  {
    std::lock_guard lock(trace_mutex_);
    timed.swap(timed_);
  }
  clock_->restart();  // the next trace measures from a reference of its own
  if (timed.empty()) return;
  // The trace's origin on the steady clock, the clock of the references' host times.
  const std::int64_t origin = steady_ns() - static_cast<std::int64_t>(TraceSources::instance().now_ns());
  auto since_origin = [&](std::int64_t t) { return static_cast<std::uint64_t>(std::max<std::int64_t>(t - origin, 0)); };
  CudaDeviceScope scope(device().ordinal(), std::nothrow);
  std::size_t left_out = 0;
  for (TimedWork& w : timed) {
    const auto begin = CudaTraceClock::host_time(*w.mark.reference, w.mark.begin.get());
    const auto end = CudaTraceClock::host_time(*w.mark.reference, w.end.get());
    if (!begin || !end) {
      ++left_out;  // not reached by the GPU yet: work of no finished run
      continue;
    }
    const std::uint64_t b = since_origin(*begin);
    out.push_back(TraceEvent{std::move(w.label), w.category, 0, b, std::max(b, since_origin(*end))});
  }
  if (left_out > 0) log_debug("stream {}: {} unfinished slices left out of the trace", name(), left_out);
}

namespace {

bool completion_by_host_function() {
  static const bool host_function = [] {
    const char* mode = std::getenv("TESSERA_CUDA_COMPLETION");
    return mode != nullptr && std::string_view(mode) == "host-function";
  }();
  return host_function;
}

}  // namespace

void CudaStream::then(std::function<void()> callback) {
  // Recorded work calls its callbacks as host functions of the recording.
  if (capture_.load(std::memory_order_acquire) != nullptr || completion_by_host_function()) {
    launch_host(std::move(callback), "callback");
    return;
  }
  std::shared_ptr<void> event = completion_events_->acquire();
  {
    CudaDeviceScope scope(device().ordinal());
    cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event.get()), stream_),
               [&] { return "recording a completion event on stream " + name(); });
  }
  {
    std::lock_guard lock(completion_mutex_);
    if (!completion_thread_.joinable()) completion_thread_ = std::thread([this] { run_completions(); });
    completions_.push_back({std::move(event), std::move(callback)});
  }
  completion_ready_.notify_one();
}

void CudaStream::run_completions() noexcept {
  // The thread's own current device: its waits are on this stream's GPU.
  if (cudaSetDevice(device().ordinal()) != cudaSuccess) (void)cudaGetLastError();
  for (;;) {
    Completion c;
    {
      std::unique_lock lock(completion_mutex_);
      completion_ready_.wait(lock, [this] { return completion_stop_ || !completions_.empty(); });
      if (completions_.empty()) return;  // stopping, and every callback has run
      c = std::move(completions_.front());
      completions_.pop_front();
      completion_running_ = true;
    }
    // Events complete in stream order, so one waiter per stream suffices. A failed wait still
    // runs the callback: the node must finish, and the error surfaces at the next checked call.
    if (const cudaError_t r = cudaEventSynchronize(static_cast<cudaEvent_t>(c.event.get())); r != cudaSuccess)
      log_error("stream {}: waiting for a completion event failed: {}", name(), cudaGetErrorString(r));
    run_dropping_errors(c.callback, "a callback", *this);
    c = {};  // the event goes back to its pool before the idle signal
    {
      std::lock_guard lock(completion_mutex_);
      completion_running_ = false;
    }
    completions_idle_.notify_all();
  }
}

void CudaStream::stop_completions() noexcept {
  {
    std::lock_guard lock(completion_mutex_);
    completion_stop_ = true;
  }
  completion_ready_.notify_one();
  if (completion_thread_.joinable()) completion_thread_.join();
}

void CudaStream::retain(std::shared_ptr<const void> object) {
  if (CudaCapture* capture = capture_.load(std::memory_order_acquire)) {
    capture->keep(std::move(object));  // used by every launch of the recording
    return;
  }
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
  // As with host functions, the callbacks of work before a synchronize have run when it returns
  // (never waited for from a callback itself: it would wait for its own end).
  std::unique_lock lock(completion_mutex_);
  if (std::this_thread::get_id() == completion_thread_.get_id()) return;
  completions_idle_.wait(lock, [this] { return completions_.empty() && !completion_running_; });
}

void CudaStream::record_into(std::shared_ptr<EventState> state) {
  CudaCapture* capture = capture_.load(std::memory_order_acquire);
  CudaDeviceScope scope(device().ordinal());
  std::shared_ptr<void> event = events_->acquire();
  cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event.get()), stream_),
             [&] { return "recording a CUDA event on stream " + name(); });
  // Set before the Event leaves Stream::record(), so readers on other threads need no lock.
  state->native = std::move(event);
  if (capture != nullptr) {
    // A point inside a recording: it orders the recorded work (waits inside the capture use the
    // CUDA event), and stands for no point of a launch. Ready, as on a sim device, so that no
    // one outside asks CUDA about it (CUDA refuses queries of a captured event).
    capture->note_recorded(state.get());
    make_ready(*state);
    return;
  }
  state->native_done = cuda_event_done;
  state->native_wait = cuda_event_wait;
}

void CudaStream::wait(const Event& e) {
  std::shared_ptr<EventState> state = state_of(e);
  if (CudaCapture* capture = capture_.load(std::memory_order_acquire)) {
    // Recording: an event recorded in the capture orders the recorded work (a query would end
    // the capture); one from before it is replaced, at each launch, by its stream's latest work.
    if (!capture->note_wait(state.get(), state->source) || !state->native) return;
    CudaDeviceScope scope(device().ordinal());
    cuda_check(cudaStreamWaitEvent(stream_, static_cast<cudaEvent_t>(state->native.get()), 0),
               [&] { return "stream " + name() + " recording a wait on a CUDA event"; });
    return;
  }
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

std::string CudaStream::capture_refusal(std::span<Stream* const> others) const {
  for (Stream* o : others) {
    auto* c = dynamic_cast<CudaStream*>(o);
    if (c == nullptr) return "stream " + o->name() + " is not a CUDA stream, and " + name() + " is";
    if (c->device().ordinal() != device().ordinal())
      return "streams " + name() + " and " + o->name() + " are on different GPUs (one CUDA graph per GPU is not built yet)";
  }
  return {};
}

std::unique_ptr<StreamCapture> CudaStream::begin_capture(std::span<Stream* const> others) {
  if (std::string why = capture_refusal(others); !why.empty()) throw Error("cannot capture work on " + name() + ": " + why);
  std::vector<CudaStream*> streams{this};
  for (Stream* o : others)
    if (std::find(streams.begin(), streams.end(), o) == streams.end()) streams.push_back(static_cast<CudaStream*>(o));
  return std::make_unique<CudaCapture>(std::move(streams), events_);
}

void CudaStream::note_replay_effect(FunctionRef<std::shared_ptr<ReplayEffect>()> make) {
  if (CudaCapture* capture = capture_.load(std::memory_order_acquire)) capture->add_effect(make());
}

void CudaStream::spoil_capture(const std::string& why) noexcept {
  if (CudaCapture* capture = capture_.load(std::memory_order_acquire)) capture->spoil(why);
}

void CudaStream::attach_capture(CudaCapture* capture) noexcept { capture_.store(capture, std::memory_order_release); }

}  // namespace tessera::detail
