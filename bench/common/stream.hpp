#pragma once
// STREAM's copy and triad (McCalpin) in OpenMP: the machine's bandwidth ceilings, which a suite
// times in the same run as what it holds against them. stream.cpp is compiled into each suite's
// OpenMP baseline object library, so the suite prints whether its loops vectorised.
//
//   tessera::bench::StreamArrays stream(std::size_t{1} << 25);  // 3 arrays of 256 MiB
//   stream.triad();  // stream.triad_bytes() moved
//   stream.copy();   // stream.copy_bytes() moved

#include <cstddef>

namespace tessera::bench {

class StreamArrays {
 public:
  /// Three arrays of n doubles, first-touched with the loops' own static schedule.
  explicit StreamArrays(std::size_t n);
  ~StreamArrays();
  StreamArrays(const StreamArrays&) = delete;
  StreamArrays& operator=(const StreamArrays&) = delete;

  void copy();   ///< a = b
  void triad();  ///< a = b + 3 c
  double copy_bytes() const { return 16.0 * static_cast<double>(n_); }
  double triad_bytes() const { return 24.0 * static_cast<double>(n_); }

 private:
  std::size_t n_;
  double *a_, *b_, *c_;
};

}  // namespace tessera::bench
