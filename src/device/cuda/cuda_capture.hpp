#pragma once
// Capture and replay on a CUDA device: a stream capture (relaxed mode, so other threads' CUDA
// calls go on) begun on the first stream, with the others forked into it by an event and joined
// back before it ends; the captured graph is instantiated once and launched with
// cudaGraphLaunch, or updated in place with cudaGraphExecUpdate when recorded again.

#include "cuda_event_pool.hpp"

#include <tessera/device/capture.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

namespace tessera {
class Stream;
}

namespace tessera::detail {

class CudaStream;
struct EventState;

class CudaCapturedWork final : public CapturedWork {
 public:
  CudaCapturedWork(CudaStream& origin, cudaGraphExec_t exec, std::vector<std::shared_ptr<const void>> kept,
                   std::vector<Stream*> outside)
      : origin_(&origin), exec_(exec), kept_(std::move(kept)), outside_(std::move(outside)) {}
  ~CudaCapturedWork() override;
  CudaCapturedWork(const CudaCapturedWork&) = delete;
  CudaCapturedWork& operator=(const CudaCapturedWork&) = delete;

  void launch() override;

 private:
  friend class CudaCapture;
  CudaStream* origin_;
  cudaGraphExec_t exec_;
  // What the recorded host functions call and what recorded work uses (Stream::retain): alive
  // as long as the recording may be launched.
  std::vector<std::shared_ptr<const void>> kept_;
  std::vector<Stream*> outside_;  // streams whose latest work each launch waits for first
};

class CudaCapture final : public StreamCapture {
 public:
  /// Begins capturing on `streams` ([0] the origin; all of one device). Throws tessera::Error
  /// when CUDA refuses (a stream already capturing, say).
  CudaCapture(std::vector<CudaStream*> streams, std::shared_ptr<CudaEventPool> events);
  ~CudaCapture() override;  // unfinished: ends the capture and drops what it recorded

  /// CUDA reports failures of recorded work as the device's error, not per node.
  void label(std::string_view /*name*/) override {}
  std::unique_ptr<CapturedWork> finish(std::unique_ptr<CapturedWork> previous) override;

  /// Called by a capturing stream: keeps `object` for the recording's lifetime.
  void keep(std::shared_ptr<const void> object);
  /// Called by a capturing stream for each event it records, and for each it waits on: true
  /// when the event was recorded inside this capture (the wait is recorded); otherwise the
  /// event's stream is noted, and each launch first waits for that stream's latest work.
  void note_recorded(const EventState* state);
  bool note_wait(const EventState* state, Stream* source);

 private:
  /// Ends the capture on every stream; returns the graph (null when CUDA had invalidated it).
  cudaGraph_t end(cudaError_t& err) noexcept;

  std::vector<CudaStream*> streams_;
  std::shared_ptr<CudaEventPool> events_;
  std::mutex kept_mutex_;
  std::vector<std::shared_ptr<const void>> kept_;
  std::vector<const EventState*> recorded_;
  std::vector<Stream*> outside_;
  bool capturing_ = false;
};

}  // namespace tessera::detail
