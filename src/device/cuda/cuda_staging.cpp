#include "cuda_staging.hpp"

#include "cuda_check.hpp"

#include <tessera/memory/bytes.hpp>

#include <algorithm>
#include <cstring>

namespace tessera::detail {

namespace {

// Small enough that the DMA of the first piece starts early, large enough that a call to
// cudaMemcpyAsync (microseconds) stays small beside the piece's memcpy (tens of microseconds).
constexpr std::size_t staging_piece = std::size_t{1} << 20;

}  // namespace

PinnedStaging::~PinnedStaging() {
  for (InFlight& f : in_flight_) pool_.deallocate(f.block, f.bytes);
}

void PinnedStaging::reclaim_done() {
  std::vector<InFlight> done;
  {
    std::lock_guard lock(mutex_);
    // Oldest first, stopping at the first copy still running: the copies mostly share one stream
    // and finish in order, and a query per block in flight would cost each copy O(blocks) calls.
    std::size_t finished = 0;
    for (; finished < in_flight_.size(); ++finished) {
      const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(in_flight_[finished].done.get()));
      if (r == cudaErrorNotReady) break;
      if (r != cudaSuccess) (void)cudaGetLastError();  // the failed copy surfaces at its stream's next check
    }
    done.assign(std::make_move_iterator(in_flight_.begin()),
                std::make_move_iterator(in_flight_.begin() + static_cast<std::ptrdiff_t>(finished)));
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(finished));
  }
  for (InFlight& f : done) pool_.deallocate(f.block, f.bytes);
}

void* PinnedStaging::take(std::size_t bytes) {
  reclaim_done();
  return pool_.try_allocate(bytes);
}

bool PinnedStaging::copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  void* block = take(bytes);
  if (block == nullptr) return false;
  auto* to = static_cast<std::byte*>(dst);
  auto* from = static_cast<const std::byte*>(src);
  auto* stage = static_cast<std::byte*>(block);
  cudaError_t failed = cudaSuccess;
  for (std::size_t at = 0; at < bytes && failed == cudaSuccess; at += staging_piece) {
    const std::size_t n = std::min(staging_piece, bytes - at);
    std::memcpy(stage + at, from + at, n);
    failed = cudaMemcpyAsync(to + at, stage + at, n, cudaMemcpyHostToDevice, stream);
  }
  std::shared_ptr<void> done;
  cudaError_t recorded = cudaErrorUnknown;
  try {
    done = events_->acquire();
    recorded = cudaEventRecord(static_cast<cudaEvent_t>(done.get()), stream);
  } catch (...) {
  }
  if (recorded != cudaSuccess) {
    // No event to know when the pieces already queued are done: wait for them here.
    (void)cudaGetLastError();
    (void)cudaStreamSynchronize(stream);
    pool_.deallocate(block, bytes);
  } else {
    try {
      std::lock_guard lock(mutex_);
      in_flight_.push_back({std::move(done), block, bytes});
    } catch (...) {  // no room to track it: wait for its copies instead
      (void)cudaStreamSynchronize(stream);
      pool_.deallocate(block, bytes);
    }
  }
  cuda_check(failed, [&] {
    return "device " + device_name_ + ": staged copy of " + format_bytes(bytes) + " from pageable host memory";
  });
  return true;
}

}  // namespace tessera::detail
