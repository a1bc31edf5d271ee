// cuBLAS products on a firing's CUDA stream (row-major: C^T = B^T A^T in cuBLAS's column-major).
// One handle per device, made on first use and kept for the process.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <mutex>

namespace tessera::flow::detail {
namespace {

cublasHandle_t handle_for(int device) {
  static std::mutex mutex;
  static std::array<cublasHandle_t, 64> handles{};
  std::lock_guard lock(mutex);
  cublasHandle_t& h = handles.at(static_cast<std::size_t>(device));
  if (h == nullptr) {
    cudaSetDevice(device);
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) h = nullptr;
  }
  return h;
}

const char* status_text(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return nullptr;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    default:
      return "cuBLAS error";
  }
}

template <typename T, typename Gemm>
const char* gemm_on(void* stream, int device, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a,
                    const T* b, T* c, Gemm call) {
  cublasHandle_t h = handle_for(device);
  if (h == nullptr) return "cublasCreate failed";
  static std::mutex handle_mutex;  // a handle is not safe for concurrent use
  std::lock_guard lock(handle_mutex);
  cublasSetStream(h, static_cast<cudaStream_t>(stream));
  const T one = 1, zero = 0;
  const int lda = static_cast<int>(ta ? m : k);
  const int ldb = static_cast<int>(tb ? k : n);
  // Column-major view: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  return status_text(call(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                          static_cast<int>(m), static_cast<int>(k), &one, b, ldb, a, lda, &zero, c,
                          static_cast<int>(n)));
}

}  // namespace

const char* cublas_gemm(void* stream, int device, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k,
                        const double* a, const double* b, double* c) {
  return gemm_on(stream, device, ta, tb, m, n, k, a, b, c, cublasDgemm);
}
const char* cublas_gemm(void* stream, int device, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k,
                        const float* a, const float* b, float* c) {
  return gemm_on(stream, device, ta, tb, m, n, k, a, b, c, cublasSgemm);
}

}  // namespace tessera::flow::detail
