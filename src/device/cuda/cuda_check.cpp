#include "cuda_check.hpp"

#include <tessera/core/error.hpp>

namespace tessera::detail {

void throw_cuda_error(cudaError_t err, const std::string& what) {
  (void)cudaGetLastError();
  throw Error(what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

CudaDeviceScope::CudaDeviceScope(int ordinal) {
  int current = -1;
  cuda_check(cudaGetDevice(&current), [] { return std::string("asking the CUDA runtime for the current device"); });
  if (current == ordinal) return;
  cuda_check(cudaSetDevice(ordinal), [&] { return "making cuda:" + std::to_string(ordinal) + " the current device"; });
  restore_ = current;
}

CudaDeviceScope::CudaDeviceScope(int ordinal, std::nothrow_t) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current == ordinal || cudaSetDevice(ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  restore_ = current;
}

CudaDeviceScope::~CudaDeviceScope() {
  if (restore_ >= 0 && cudaSetDevice(restore_) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace tessera::detail
