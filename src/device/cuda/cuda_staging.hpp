#pragma once
// Pinned staging for copies from pageable host memory to a GPU. cudaMemcpyAsync from pageable
// memory first synchronises with its stream (CUDA's "API synchronization behavior": the driver
// stages the bytes itself), so the calling thread waits for everything queued before it, host
// functions included. Copying the bytes into a block of the pinned pool here instead keeps the
// copy asynchronous, and the source may be reused as soon as the call returns.

#include "cuda_event_pool.hpp"

#include <tessera/memory/pool_allocator.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

class PinnedStaging {
 public:
  PinnedStaging(PoolAllocator& pool, std::shared_ptr<CudaEventPool> events, std::string device_name)
      : pool_(pool), events_(std::move(events)), device_name_(std::move(device_name)) {}
  /// Returns every block; the owner has synchronised the streams that read them.
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  /// Copies `bytes` from host `src` to device `dst` on `stream` through a staging block, piece by
  /// piece so the DMA of one piece overlaps the memcpy of the next. Returns false, having done
  /// nothing, when the pool has no room even after taking back the blocks whose copies are done.
  /// Throws tessera::Error when CUDA refuses a copy.
  bool copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

 private:
  struct InFlight {
    std::shared_ptr<void> done;  // a pooled cudaEvent_t recorded after the block's last copy
    void* block;
    std::size_t bytes;
  };
  void* take(std::size_t bytes);
  void reclaim_done();

  PoolAllocator& pool_;
  std::shared_ptr<CudaEventPool> events_;
  std::string device_name_;
  std::mutex mutex_;
  std::vector<InFlight> in_flight_;
};

}  // namespace tessera::detail
