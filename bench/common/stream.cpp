// STREAM copy and triad (see stream.hpp). Built with OpenMP as part of a suite's baselines.
#include "stream.hpp"

#include <cstdlib>
#include <new>

namespace tessera::bench {

StreamArrays::StreamArrays(std::size_t n) : n_(n) {
  const std::size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
  a_ = static_cast<double*>(std::aligned_alloc(64, bytes));
  b_ = static_cast<double*>(std::aligned_alloc(64, bytes));
  c_ = static_cast<double*>(std::aligned_alloc(64, bytes));
  if (!a_ || !b_ || !c_) {
    std::free(a_);
    std::free(b_);
    std::free(c_);
    throw std::bad_alloc();
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a_[i] = 0.0;
    b_[i] = 1.0;
    c_[i] = 2.0;
  }
}

StreamArrays::~StreamArrays() {
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

void StreamArrays::copy() {
  double* __restrict a = a_;
  const double* __restrict b = b_;
  const std::size_t n = n_;
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: stream-copy
    a[i] = b[i];
  }
}

void StreamArrays::triad() {
  double* __restrict a = a_;
  const double* __restrict b = b_;
  const double* __restrict c = c_;
  const std::size_t n = n_;
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: triad
    a[i] = b[i] + 3.0 * c[i];
  }
}

}  // namespace tessera::bench
