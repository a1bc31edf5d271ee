#include "cuda_trace_clock.hpp"

#include "cuda_check.hpp"

#include <cmath>

namespace tessera::detail {

namespace {

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr std::int64_t max_reference_age_ns = std::int64_t{60} * 1'000'000'000;  // float ms: ~4 us resolution

}  // namespace

CudaTraceClock::CudaTraceClock(int ordinal, std::string device_name)
    : ordinal_(ordinal),
      device_name_(std::move(device_name)),
      events_(CudaEventPool::create(ordinal, device_name_, 0, CudaEventPool::Kind::timing)) {}

CudaTraceClock::~CudaTraceClock() {
  current_.reset();  // its event back to the pool, which outlives this (events_ goes after)
  if (stream_ == nullptr) return;
  CudaDeviceScope scope(ordinal_, std::nothrow);
  if (cudaStreamDestroy(stream_) != cudaSuccess) (void)cudaGetLastError();
}

std::shared_ptr<const CudaClockReference> CudaTraceClock::reference() {
  std::lock_guard lock(mutex_);
  if (current_ && steady_ns() - current_->host_ns < max_reference_age_ns) return current_;
  CudaDeviceScope scope(ordinal_);
  if (stream_ == nullptr)
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
               [&] { return "device " + device_name_ + ": creating the trace clock's stream"; });
  auto reference = std::make_shared<CudaClockReference>();
  reference->event = events_->acquire();
  auto* event = static_cast<cudaEvent_t>(reference->event.get());
  cuda_check(cudaEventRecord(event, stream_),
             [&] { return "device " + device_name_ + ": recording the trace's reference event"; });
  cuda_check(cudaEventSynchronize(event),
             [&] { return "device " + device_name_ + ": waiting for the trace's reference event"; });
  // Right after the wait returns: the GPU passed the event a wake-up's latency (microseconds) earlier.
  reference->host_ns = steady_ns();
  current_ = std::move(reference);
  return current_;
}

void CudaTraceClock::restart() noexcept {
  std::shared_ptr<const CudaClockReference> old;  // released outside the lock
  std::lock_guard lock(mutex_);
  old = std::move(current_);
}

std::optional<std::int64_t> CudaTraceClock::host_time(const CudaClockReference& reference, void* event) noexcept {
  auto* e = static_cast<cudaEvent_t>(event);
  const cudaError_t done = cudaEventQuery(e);
  if (done == cudaErrorNotReady) return std::nullopt;
  float ms = 0.0f;
  if (done != cudaSuccess ||
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(reference.event.get()), e) != cudaSuccess) {
    (void)cudaGetLastError();  // a timing lost is no failure of the traced work
    return std::nullopt;
  }
  return reference.host_ns + std::llround(static_cast<double>(ms) * 1e6);
}

}  // namespace tessera::detail
