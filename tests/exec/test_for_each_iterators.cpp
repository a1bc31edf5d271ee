// Iterators in kernels: offsets at every partition edge and corner in 1-D, 2-D and 3-D, with
// and without sub-partitions, on host, sim:1 and sim:4; the indices an iterator reports; and
// in_shared staging against the global-memory path.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

using namespace tessera;
using tensor_test::code;

namespace {

class ForEachIterators : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

template <std::size_t D>
std::int64_t wrap(std::int64_t i, std::size_t n) {
  const auto m = static_cast<std::int64_t>(n);
  return ((i % m) + m) % m;
}

/// The stencil every kernel below computes, evaluated on the global periodic array.
template <std::size_t D>
float reference_stencil(const Extent<D>& n, const Index<D>& i) {
  float s = 0;
  for (std::size_t d = 0; d < D; ++d) {
    Index<D> up = i, down = i;
    up.coords[d] = wrap<D>(i.coords[d] + 1, n.sizes[d]);
    down.coords[d] = wrap<D>(i.coords[d] - 1, n.sizes[d]);
    s += static_cast<float>(d + 1) * (code(up) - code(down));
  }
  if constexpr (D >= 2) {  // a corner neighbour: exercises chained offsets and corner halos
    Index<D> c = i;
    c.coords[0] = wrap<D>(i.coords[0] + 1, n.sizes[0]);
    c.coords[1] = wrap<D>(i.coords[1] - 1, n.sizes[1]);
    s += code(c);
  }
  return s;
}

template <std::size_t D>
void check_stencil_everywhere(Executor& ex, MemoryManager& memory, Extent<D> n, Extent<D> partitions,
                              Extent<D> sub_partitions, bool shared, std::size_t rows_per_task = 0) {
  TensorOptions<D> o;
  o.partitions = partitions;
  o.sub_partitions = sub_partitions;
  o.with_padding(1).named("u");
  Tensor<float, D> u(memory, n, o);
  TensorOptions<D> oo = o;
  oo.padding = Index<D>{};
  Tensor<float, D> out(memory, n, oo.named("out"));
  Tensor<float, D> where(memory, n, oo.named("where"));

  std::vector<float> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = code(n.delinear(k));
  u.fill_from(dense.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});

  auto stencil = [] TESSERA_HOST_DEVICE(auto in, auto res, auto w) {
    float s = 0;
    unrolled_for<decltype(in)::dims>([&](auto d) {
      s += static_cast<float>(d + 1) * (*in.offset(d, 1) - *in.offset(d, -1));
    });
    if constexpr (decltype(in)::dims >= 2) s += *in.offset(0, 1).offset(1, -1);
    *res = s;
    // Where the kernel thinks it is, from the output's IndexedIterator.
    float c = 1, scale = 1;
    bool blocks_add_up = true;
    for (std::size_t d = 0; d < decltype(res)::dims; ++d, scale *= 100) {
      c += scale * static_cast<float>(res.global_idx(d));
      blocks_add_up = blocks_add_up && res.block_idx(d) * static_cast<std::int64_t>(res.block_size(d)) + res.thread_idx(d) == res.local_idx(d);
    }
    *w = blocks_add_up ? c : -1.0f;
  };
  ExecOptions eo;
  eo.block[0] = 4;
  eo.block[1] = 3;
  eo.block[2] = 2;
  eo.rows_per_task = rows_per_task;
  if (shared)
    for_each(ex, eo, stencil, in_shared(u), out, where);
  else
    for_each(ex, eo, stencil, u, out, where);

  std::vector<float> got(n.volume()), at(n.volume());
  out.gather_to(got.data());
  where.gather_to(at.data());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const Index<D> i = n.delinear(k);
    ASSERT_EQ(got[k], reference_stencil(n, i)) << "site " << k << " partitions " << partitions.sizes[0]
                                               << " rows per task " << rows_per_task;
    ASSERT_EQ(at[k], code(i)) << "site " << k;
  }
}

TEST_P(ForEachIterators, OneDimensionalEdges) {
  for (bool shared : {false, true}) {
    check_stencil_everywhere<1>(ex, memory(), Extent<1>{37}, Extent<1>{1}, Extent<1>{1}, shared);
    check_stencil_everywhere<1>(ex, memory(), Extent<1>{37}, Extent<1>{4}, Extent<1>{1}, shared);
    check_stencil_everywhere<1>(ex, memory(), Extent<1>{37}, Extent<1>{2}, Extent<1>{3}, shared);
  }
}

TEST_P(ForEachIterators, TwoDimensionalEdgesAndCorners) {
  for (bool shared : {false, true}) {
    check_stencil_everywhere<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{1, 1}, Extent<2>{1, 1}, shared);
    check_stencil_everywhere<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{2, 2}, Extent<2>{1, 1}, shared);
    check_stencil_everywhere<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{1, 2}, Extent<2>{2, 2}, shared);
  }
}

TEST_P(ForEachIterators, ThreeDimensionalEdgesAndCorners) {
  for (bool shared : {false, true}) {
    check_stencil_everywhere<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{1, 1, 1}, Extent<3>{1, 1, 1}, shared);
    check_stencil_everywhere<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{1, 1, 2}, Extent<3>{2, 1, 1}, shared);
    check_stencil_everywhere<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{2, 2, 1}, Extent<3>{1, 1, 2}, shared);
  }
}

// A CPU worker walks a chunk's rows by stepping its row starts from row to row (along y, and at
// a plane's end back along y and on along z) and jumps to the first row of its next chunk: one
// row a chunk, four (steps across the ends of planes) and one chunk for the whole block.
TEST_P(ForEachIterators, RowsWalkedInChunksOfAnySize) {
  for (std::size_t rows_per_task : {std::size_t{1}, std::size_t{4}, std::size_t{1} << 20}) {
    check_stencil_everywhere<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{1, 1, 1}, Extent<3>{1, 1, 1}, false,
                                rows_per_task);
    check_stencil_everywhere<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{1, 2, 1}, Extent<3>{1, 1, 2}, false,
                                rows_per_task);
    check_stencil_everywhere<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{1, 1}, Extent<2>{1, 1}, false,
                                rows_per_task);
  }
}

TENSOR_TEST_ON_DEVICES(ForEachIterators);

}  // namespace
