// Dense products for flows. On the host a product is split into row blocks of the result, each
// an OpenBLAS call on one worker (OpenBLAS set to one thread, so the executor's workers are the
// only pool, as everywhere in tessera); a simulated device runs the whole call on its stream
// thread; a CUDA device gets cuBLAS on the firing's stream (cublas.cpp).

#include <fmt/format.h>
#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/flow/context.hpp>
#include <tessera/flow/detail/blas.hpp>
#include <tessera/flow/operation.hpp>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#if defined(TESSERA_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace tessera::flow::detail {

#if defined(TESSERA_HAVE_CUDA)
const char* cublas_gemm(void* stream, int device, bool trans_a, bool trans_b, std::size_t m, std::size_t n,
                        std::size_t k, const double* a, const double* b, double* c);
const char* cublas_gemm(void* stream, int device, bool trans_a, bool trans_b, std::size_t m, std::size_t n,
                        std::size_t k, const float* a, const float* b, float* c);
#endif

namespace {

#if defined(TESSERA_HAVE_OPENBLAS)
// OpenBLAS's pthread build starts a pool of (cores - 1) threads when it is loaded, each of which
// yields in a loop for its first 2^28 cycles (about 0.1 s) before it sleeps: every process that
// links tessera, every MPI rank and every test, would start with the other cores busy. So
// OpenBLAS is set to one thread and its pool shut as tessera is loaded, unless the user chose
// its threads (OPENBLAS_NUM_THREADS). In that order: setting the number of threads starts the
// pool again when it is shut. A program that wants OpenBLAS's threads for its own calls sets
// their number after (openblas_set_num_threads), which brings the pool back. Weak: the serial
// and OpenMP builds have no such pool.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
void shut_blas_pool() {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}
[[maybe_unused]] const bool blas_pool_shut_at_load = [] {
  if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr) shut_blas_pool();
  return true;
}();
// Products run one OpenBLAS call per worker: a program that gave OpenBLAS threads since is set
// back to one, once.
void one_blas_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (openblas_get_num_threads() != 1) shut_blas_pool();
  });
}
void blas_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
               const double* b, std::size_t ldb, double* c, std::size_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0, c,
              static_cast<int>(ldc));
}
void blas_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
               const float* b, std::size_t ldb, float* c, std::size_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f,
              c, static_cast<int>(ldc));
}
#else
void one_blas_thread() {}
#endif

// The same product by rows, without OpenBLAS (i-p-j order, the inner loop over contiguous c and b).
template <typename T>
void portable_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda,
                   const T* b, std::size_t ldb, T* c, std::size_t ldc) {
  for (std::size_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    std::fill(ci, ci + n, T(0));
    for (std::size_t p = 0; p < k; ++p) {
      const T aip = ta ? a[p * lda + i] : a[i * lda + p];
      if (tb) {
        for (std::size_t j = 0; j < n; ++j) ci[j] += aip * b[j * ldb + p];
      } else {
        const T* bp = b + p * ldb;
#pragma omp simd
        for (std::size_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    }
  }
}

#if !defined(TESSERA_HAVE_OPENBLAS)
template <typename T>
void blas_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b,
               std::size_t ldb, T* c, std::size_t ldc) {
  portable_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}
#endif

template <typename T>
bool gemm_impl(Context& ctx, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b,
               T* c, GemmEpilogue<T> epi) {
  if (m == 0 || n == 0) return true;
  one_blas_thread();
  const std::size_t lda = ta ? m : k;
  const std::size_t ldb = tb ? k : n;
  if (ctx.on_device() && ctx.stream_native() != nullptr) {
#if defined(TESSERA_HAVE_CUDA)
    ctx.count_kernel();
    if (const char* err = cublas_gemm(ctx.stream_native(), ctx.device().ordinal(), ta, tb, m, n, k, a, b, c))
      throw Error(
          fmt::format("flow: cuBLAS gemm of '{}' on {} failed: {}", ctx.operation().name(), ctx.device().name(), err));
    return epi.apply == nullptr;
#else
    throw Error("flow: a CUDA stream in a build without the CUDA backend");
#endif
  }
  if (ctx.on_device()) {
    // A simulated device's memory is host memory: its stream thread runs the whole product.
    ctx.run_on_host_thread("gemm", [=] {
      blas_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
      if (epi.apply != nullptr) epi.apply(epi.context, c, m * n);
    });
    return true;
  }
  // Host: row blocks of c on the workers; a block is large enough to keep OpenBLAS's kernels fed.
  ctx.count_kernel();
  const std::size_t workers = std::max<std::size_t>(1, ctx.executor().num_workers());
  const std::size_t flops_per_row = n * k;
  std::size_t rows = std::max<std::size_t>(1, (m + 4 * workers - 1) / (4 * workers));
  if (flops_per_row * m < (std::size_t{1} << 18)) rows = m;  // small: one call
  const std::size_t blocks = (m + rows - 1) / rows;
  ctx.executor().parallel_for(
      0, blocks,
      [&](std::size_t blk) {
        const std::size_t i0 = blk * rows;
        const std::size_t i1 = std::min(m, i0 + rows);
        const T* ablk = ta ? a + i0 : a + i0 * lda;
        blas_gemm(ta, tb, i1 - i0, n, k, ablk, lda, b, ldb, c + i0 * n, n);
        if (epi.apply != nullptr) epi.apply(epi.context, c + i0 * n, (i1 - i0) * n);
      },
      1);
  return true;
}

}  // namespace

bool gemm(Context& ctx, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b,
          double* c, GemmEpilogue<double> epi) {
  return gemm_impl(ctx, ta, tb, m, n, k, a, b, c, epi);
}
bool gemm(Context& ctx, bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
          float* c, GemmEpilogue<float> epi) {
  return gemm_impl(ctx, ta, tb, m, n, k, a, b, c, epi);
}

}  // namespace tessera::flow::detail
