#pragma once
// Internal: the dense linear algebra behind MatrixProduct and MatrixVectorProduct, run where the
// firing runs: OpenBLAS on host memory (row blocks on the executor's workers, one OpenBLAS
// thread each), OpenBLAS on a simulated device's stream thread, cuBLAS on a CUDA stream.
// Matrices are row-major.

#include <cstddef>

namespace tessera::flow {
class Context;
}

namespace tessera::flow::detail {

/// An element-wise function applied to the product where it is made: on the host to each row
/// block right after its product (while it is in cache), on a simulated device in the same host
/// task. `apply(context, c, count)` maps count elements of c in place.
template <typename T>
struct GemmEpilogue {
  void (*apply)(const void* context, T* c, std::size_t count) = nullptr;
  const void* context = nullptr;
};

/// c[m x n] = op(a) * op(b), op(a) m x k and op(b) k x n; op transposes a stored matrix when
/// asked (a stored k x m, b stored n x k). Returns whether the epilogue was applied; a CUDA
/// device leaves it to the caller's kernel.
bool gemm(Context& ctx, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const double* a,
          const double* b, double* c, GemmEpilogue<double> epilogue = {});
bool gemm(Context& ctx, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const float* a,
          const float* b, float* c, GemmEpilogue<float> epilogue = {});

}  // namespace tessera::flow::detail
