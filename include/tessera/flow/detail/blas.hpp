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

/// c[m x n] = op(a) * op(b), op(a) m x k and op(b) k x n; op transposes a stored matrix when
/// asked (a stored k x m, b stored n x k).
void gemm(Context& ctx, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const double* a,
          const double* b, double* c);
void gemm(Context& ctx, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const float* a,
          const float* b, float* c);
/// y[m] = a[m x n] x[n].
void gemv(Context& ctx, std::size_t m, std::size_t n, const double* a, const double* x, double* y);
void gemv(Context& ctx, std::size_t m, std::size_t n, const float* a, const float* x, float* y);

}  // namespace tessera::flow::detail
