#pragma once
// The check of ExecOptions::edge_width that tests/exec (host and sim) and tests/cuda (a GPU) both
// run: a kernel that counts its visits, run over a tensor cut into `partitions`, must have
// visited exactly the sites within w of the domain's faces, once each. The kernel is a named
// functor so that nvcc compiles it too.

#include <gtest/gtest.h>

#include <tessera/core/host_device.hpp>
#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edge_test {

struct CountVisit {
  TESSERA_HOST_DEVICE void operator()(auto it) const { *it += 1.0f; }
};

template <std::size_t D>
bool near_a_face(const tessera::Extent<D>& n, const tessera::Index<D>& i, std::int64_t w) {
  for (std::size_t d = 0; d < D; ++d)
    if (i.coords[d] < w || i.coords[d] >= static_cast<std::int64_t>(n.sizes[d]) - w) return true;
  return false;
}

template <std::size_t D>
void check_visits(tessera::Executor& ex, tessera::MemoryManager& memory, tessera::Extent<D> n,
                  tessera::Extent<D> partitions, std::size_t w) {
  tessera::TensorOptions<D> o;
  o.partitions = partitions;
  tessera::Tensor<float, D> visits(memory, n, o.with_padding(1).named("visits"));
  const std::vector<float> zeros(n.volume(), 0.0f);
  visits.fill_from(zeros.data());
  tessera::ExecOptions edges;
  edges.edge_width = w;
  tessera::for_each(ex, edges, CountVisit{}, visits);
  std::vector<float> got(n.volume());
  visits.gather_to(got.data());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const tessera::Index<D> i = n.delinear(k);
    ASSERT_EQ(got[k], near_a_face(n, i, static_cast<std::int64_t>(w)) ? 1.0f : 0.0f)
        << "site " << k << " of " << n.volume() << ", width " << w << ", " << partitions.volume() << " partitions";
  }
}

}  // namespace edge_test
