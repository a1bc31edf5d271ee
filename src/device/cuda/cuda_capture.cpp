#include "cuda_capture.hpp"

#include "../../core/log_internal.hpp"
#include "cuda_check.hpp"
#include "cuda_stream.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>

#include <algorithm>

namespace tessera::detail {

CudaCapture::CudaCapture(std::vector<CudaStream*> streams, std::shared_ptr<CudaEventPool> events)
    : streams_(std::move(streams)), events_(std::move(events)) {
  CudaStream& origin = *streams_[0];
  CudaDeviceScope scope(origin.device().ordinal());
  cuda_check(cudaStreamBeginCapture(origin.cuda_stream(), cudaStreamCaptureModeRelaxed),
             [&] { return "beginning a capture on stream " + origin.name(); });
  capturing_ = true;
  origin.attach_capture(this);
  try {
    // The other streams join the capture by waiting on an event recorded in it.
    for (std::size_t k = 1; k < streams_.size(); ++k) {
      std::shared_ptr<void> fork = events_->acquire();
      cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(fork.get()), origin.cuda_stream()),
                 [&] { return "forking a capture from stream " + origin.name(); });
      cuda_check(cudaStreamWaitEvent(streams_[k]->cuda_stream(), static_cast<cudaEvent_t>(fork.get()), 0),
                 [&] { return "stream " + streams_[k]->name() + " joining the capture of " + origin.name(); });
      streams_[k]->attach_capture(this);
    }
  } catch (...) {
    cudaError_t ignored = cudaSuccess;
    if (cudaGraph_t g = end(ignored)) (void)cudaGraphDestroy(g);
    throw;
  }
}

CudaCapture::~CudaCapture() {
  if (!capturing_) return;
  CudaDeviceScope scope(streams_[0]->device().ordinal(), std::nothrow);
  cudaError_t err = cudaSuccess;
  if (cudaGraph_t g = end(err)) (void)cudaGraphDestroy(g);
  (void)cudaGetLastError();  // a dropped capture's error is not the next call's
}

cudaGraph_t CudaCapture::end(cudaError_t& err) noexcept {
  CudaStream& origin = *streams_[0];
  // Join the others back: a capture may only end once every stream it forked is joined.
  for (std::size_t k = 1; k < streams_.size() && err == cudaSuccess; ++k) {
    try {
      std::shared_ptr<void> join = events_->acquire();
      err = cudaEventRecord(static_cast<cudaEvent_t>(join.get()), streams_[k]->cuda_stream());
      if (err == cudaSuccess) err = cudaStreamWaitEvent(origin.cuda_stream(), static_cast<cudaEvent_t>(join.get()), 0);
    } catch (...) {
      err = cudaErrorMemoryAllocation;
    }
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(origin.cuda_stream(), &graph);
  if (err == cudaSuccess) err = ended;
  for (CudaStream* s : streams_) s->attach_capture(nullptr);
  capturing_ = false;
  return graph;
}

void CudaCapture::keep(std::shared_ptr<const void> object) {
  std::lock_guard lock(kept_mutex_);
  kept_.push_back(std::move(object));
}

void CudaCapture::note_recorded(const EventState* state) {
  std::lock_guard lock(kept_mutex_);
  recorded_.push_back(state);
}

bool CudaCapture::note_wait(const EventState* state, Stream* source) {
  std::lock_guard lock(kept_mutex_);
  if (std::find(recorded_.begin(), recorded_.end(), state) != recorded_.end()) return true;
  if (source != nullptr && std::find(outside_.begin(), outside_.end(), source) == outside_.end())
    outside_.push_back(source);
  return false;
}

std::unique_ptr<CapturedWork> CudaCapture::finish(std::unique_ptr<CapturedWork> previous) {
  CudaStream& origin = *streams_[0];
  CudaDeviceScope scope(origin.device().ordinal());
  cudaError_t err = cudaSuccess;
  cudaGraph_t graph = end(err);
  if (err != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    throw_cuda_error(err, "capturing work on stream " + origin.name() +
                              " (work that cannot be recorded was enqueued during the capture: a copy from pageable "
                              "host memory, a synchronizing call)");
  }
  std::vector<std::shared_ptr<const void>> kept;
  std::vector<Stream*> outside;
  {
    std::lock_guard lock(kept_mutex_);
    kept.swap(kept_);
    outside.swap(outside_);
  }
  // What the recorded work waited for from outside is not all it depends on: the memory layer
  // skips an event that was already done when it asked, and a later run may enqueue that work
  // later. Each launch therefore follows everything enqueued before it on every stream of the
  // device (the executor enqueues what a part depends on before launching it).
  Device& device = origin.device();
  auto add = [&](Stream& st) {
    if (&st != &origin && std::find(outside.begin(), outside.end(), &st) == outside.end()) outside.push_back(&st);
  };
  for (std::size_t i = 0; i < device.num_compute_streams(); ++i) add(device.compute_stream(i));
  add(device.copy_stream(CopyDirection::host_to_device));
  add(device.copy_stream(CopyDirection::device_to_host));
  add(device.copy_stream(CopyDirection::device_to_device));
  if (auto* old = dynamic_cast<CudaCapturedWork*>(previous.get()); old != nullptr && old->origin_ == &origin) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(old->exec_, graph, &info) == cudaSuccess) {
      (void)cudaGraphDestroy(graph);
      old->kept_ = std::move(kept);  // the updated host functions call the new objects
      old->outside_ = std::move(outside);
      return previous;
    }
    (void)cudaGetLastError();  // another shape: built anew below
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  cuda_check(made, [&] { return "instantiating the work captured on stream " + origin.name(); });
  return std::make_unique<CudaCapturedWork>(origin, exec, std::move(kept), std::move(outside));
}

CudaCapturedWork::~CudaCapturedWork() {
  CudaDeviceScope scope(origin_->device().ordinal(), std::nothrow);
  if (cudaGraphExecDestroy(exec_) != cudaSuccess) (void)cudaGetLastError();
}

void CudaCapturedWork::launch() {
  // Work the recording waited on from outside (a host node's copy on a copy stream, say) is
  // new each run: the launch waits for those streams' latest work, on the device.
  for (Stream* s : outside_)
    if (s != origin_) origin_->wait(s->record());
  CudaDeviceScope scope(origin_->device().ordinal());
  cuda_check(cudaGraphLaunch(exec_, origin_->cuda_stream()),
             [&] { return "launching the work captured on stream " + origin_->name(); });
}

}  // namespace tessera::detail
