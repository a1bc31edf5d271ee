#pragma once
// Every CUDA runtime call of the backend goes through cuda_check: a failure becomes a
// tessera::Error carrying the CUDA error and what was being done. CudaDeviceScope makes a
// device current for one call without changing the caller's own setting.

#include <cuda_runtime_api.h>

#include <new>
#include <string>

namespace tessera::detail {

/// Throws tessera::Error "<what>: <cudaErrorName> (<description>)" after clearing the runtime's
/// last-error slot, so a handled failure does not resurface in an unrelated cudaGetLastError.
[[noreturn]] void throw_cuda_error(cudaError_t err, const std::string& what);

/// `what` is a callable returning the description; it runs only on failure, so the hot path
/// builds no strings.
///
///   cuda_check(cudaStreamSynchronize(s), [&] { return "synchronizing " + name(); });
template <class What>
void cuda_check(cudaError_t err, What&& what) {
  if (err != cudaSuccess) [[unlikely]]
    throw_cuda_error(err, what());
}

/// Makes `ordinal` the calling thread's current CUDA device for the scope and restores the
/// previous one after. Executor workers serve every device in turn, and code that launches
/// kernels relies on its own cudaSetDevice, so the backend never leaves a thread switched.
class CudaDeviceScope {
 public:
  /// Throws tessera::Error when the device cannot be made current.
  explicit CudaDeviceScope(int ordinal);
  /// For destructors: failures are ignored (the runtime may be unloading at exit).
  CudaDeviceScope(int ordinal, std::nothrow_t) noexcept;
  ~CudaDeviceScope();
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  int restore_ = -1;  // the caller's device, or -1 when it already was `ordinal`
};

}  // namespace tessera::detail
