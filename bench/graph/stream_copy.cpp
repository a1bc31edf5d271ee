// STREAM copy for SUITE=graph (see stream_copy.hpp), first-touched by the threads that copy.
#include "stream_copy.hpp"

#include <cstdlib>
#include <new>

namespace tessera::bench {

StreamCopy::StreamCopy(std::size_t n) : n_(n) {
  a_ = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  b_ = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  if (!a_ || !b_) {
    std::free(a_);
    std::free(b_);
    throw std::bad_alloc();
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a_[i] = 0.0;
    b_[i] = static_cast<double>(i % 7);
  }
}

StreamCopy::~StreamCopy() {
  std::free(a_);
  std::free(b_);
}

void StreamCopy::run() {
  double* __restrict a = a_;
  const double* __restrict b = b_;
  const std::size_t n = n_;
#pragma omp parallel for simd schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // hot-loop: stream-copy
    a[i] = b[i];
  }
}

}  // namespace tessera::bench
