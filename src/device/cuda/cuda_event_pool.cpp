#include "cuda_event_pool.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <new>

namespace tessera::detail {

std::shared_ptr<CudaEventPool> CudaEventPool::create(int ordinal, std::string device_name, std::size_t initial,
                                                     Kind kind) {
  std::shared_ptr<CudaEventPool> pool(new CudaEventPool(ordinal, std::move(device_name), kind));
  for (std::size_t i = 0; i < initial; ++i) pool->free_.push_back(pool->create_event());
  return pool;
}

CudaEventPool::~CudaEventPool() {
  // Events may outlive their device in user hands, so this can run at exit after the runtime
  // has begun unloading: nothing is left to report to then.
  CudaDeviceScope scope(ordinal_, std::nothrow);
  for (cudaEvent_t e : free_)
    if (cudaEventDestroy(e) != cudaSuccess) (void)cudaGetLastError();
}

cudaEvent_t CudaEventPool::create_event() {
  {
    // Room for every event made so far, so that give_back never allocates: it runs inside CUDA
    // host functions, where a fallback that called CUDA would not be allowed.
    std::lock_guard lock(mutex_);
    ++created_;
    if (free_.capacity() < created_) free_.reserve(std::max(created_, 2 * free_.capacity()));
  }
  CudaDeviceScope scope(ordinal_);
  cudaEvent_t e = nullptr;
  const unsigned flags = kind_ == Kind::timing     ? cudaEventDefault
                        : kind_ == Kind::blocking ? cudaEventDisableTiming | cudaEventBlockingSync
                                                  : cudaEventDisableTiming;
  cuda_check(cudaEventCreateWithFlags(&e, flags),
             [&] { return "device " + device_name_ + ": creating a CUDA event"; });
  return e;
}

std::shared_ptr<void> CudaEventPool::acquire() {
  cudaEvent_t e = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      e = free_.back();
      free_.pop_back();
    }
  }
  if (e == nullptr) e = create_event();
  // Should the control block fail to allocate, shared_ptr calls the deleter: the event returns.
  return std::shared_ptr<void>(e,
                               [pool = shared_from_this()](void* p) { pool->give_back(static_cast<cudaEvent_t>(p)); });
}

void CudaEventPool::give_back(cudaEvent_t event) noexcept {
  std::lock_guard lock(mutex_);
  free_.push_back(event);  // within the capacity reserved when the event was made
}

}  // namespace tessera::detail
