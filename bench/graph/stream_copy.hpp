#pragma once
// STREAM's copy (a = b over doubles, 16 bytes an element) in OpenMP: the machine's copy bandwidth,
// which issue 19 asks euler2d's host step to be compared with. Built with the OpenMP baseline, so
// the suite prints whether its loop vectorised.
//
//   tessera::bench::StreamCopy copy(std::size_t{1} << 25);
//   copy.run();  // copy.bytes() moved

#include <cstddef>

namespace tessera::bench {

class StreamCopy {
 public:
  explicit StreamCopy(std::size_t n);
  ~StreamCopy();
  StreamCopy(const StreamCopy&) = delete;
  StreamCopy& operator=(const StreamCopy&) = delete;
  void run();
  double bytes() const { return 16.0 * static_cast<double>(n_); }

 private:
  std::size_t n_;
  double *a_, *b_;
};

}  // namespace tessera::bench
