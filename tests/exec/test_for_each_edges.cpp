// ExecOptions::edge_width: on the CPU (host blocks and sim devices) the kernel runs at exactly
// the sites within w of the global domain's faces, once each, in 1-D, 2-D and 3-D, however the
// tensor is partitioned, for arithmetic and Tiled record tensors; and the edge boxes a CUDA
// launch covers hold each of a block's edge sites exactly once (the launch itself is tested in
// tests/cuda/test_cuda_kernels.cu, where a GPU is).

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/exec/detail/cuda_block.hpp>
#include <tessera/tensor/tensor.hpp>
#include <vector>

#include "../tensor/tensor_test_support.hpp"
#include "edge_visits.hpp"

using namespace tessera;
using tensor_test::Particle;

namespace {

class ForEachEdges : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

using edge_test::check_visits;
using edge_test::near_a_face;

TEST_P(ForEachEdges, OneDimension) {
  for (std::size_t w : {1, 2, 20}) {
    check_visits<1>(ex, memory(), Extent<1>{37}, Extent<1>{1}, w);
    check_visits<1>(ex, memory(), Extent<1>{37}, Extent<1>{4}, w);
  }
}

TEST_P(ForEachEdges, TwoDimensions) {
  for (std::size_t w : {1, 2}) {
    check_visits<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{1, 1}, w);
    check_visits<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{2, 2}, w);
    check_visits<2>(ex, memory(), Extent<2>{13, 11}, Extent<2>{1, 4}, w);
  }
}

TEST_P(ForEachEdges, ThreeDimensions) {
  check_visits<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{1, 1, 1}, 1);
  check_visits<3>(ex, memory(), Extent<3>{7, 6, 5}, Extent<3>{2, 1, 2}, 1);
}

// The euler2d use: a Tiled record tensor whose edge sites copy themselves into the padding.
TEST_P(ForEachEdges, TiledRecordsCopyIntoThePadding) {
  const Extent<2> n{21, 9};
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, 2};
  Tensor<Particle<float>, 2, Tiled<8>> t(memory(), n, o.with_padding(1).named("particles"));
  std::vector<Particle<float>> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = tensor_test::particle(static_cast<float>(k));
  t.fill_from(dense.data());
  ExecOptions edges;
  edges.edge_width = 1;
  for_each(
      ex, edges,
      [] TESSERA_HOST_DEVICE(auto it) {
        if (it.global_idx(0) == 0) *it.offset(0, -1) = *it;
        if (it.global_idx(1) == static_cast<std::int64_t>(it.global_size(1)) - 1) *it.offset(1, 1) = *it;
      },
      t);
  for (std::int64_t y = 0; y < 9; ++y)
    EXPECT_TRUE(tensor_test::same(t.get({-1, y}), dense[static_cast<std::size_t>(21 * y)])) << "row " << y;
  for (std::int64_t x = 0; x < 21; ++x)
    EXPECT_TRUE(tensor_test::same(t.get({x, 9}), dense[static_cast<std::size_t>(21 * 8 + x)])) << "column " << x;
}

TENSOR_TEST_ON_DEVICES(ForEachEdges);

/// Every site of a block (extent n at global origin) that the edge boxes hold, counted: exactly
/// the block's sites within w of the global faces, once each, and every box inside the block.
template <std::size_t D>
void check_edge_boxes(Index<D> origin, Extent<D> n, Extent<D> global, std::size_t w) {
  const detail::EdgeBoxes<D> boxes(origin, n, global, w);
  std::vector<int> seen(n.volume(), 0);
  std::size_t total = 0;
  for (unsigned k = 0; k < boxes.count; ++k) {
    Index<D> hi = boxes.lo[k];
    for (std::size_t d = 0; d < D; ++d) hi.coords[d] += static_cast<std::int64_t>(boxes.size[k].sizes[d]);
    const Box<D> box(boxes.lo[k], hi);
    ASSERT_TRUE(Box<D>(n).contains(box)) << "box " << k;
    for (std::size_t i = 0; i < boxes.size[k].volume(); ++i) ++seen[n.linear(boxes.size[k].delinear(i) + boxes.lo[k])];
    total += boxes.size[k].volume();
    ASSERT_EQ(boxes.end[k], total) << "box " << k;
  }
  EXPECT_EQ(boxes.volume(), total);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    const Index<D> local = n.delinear(k);
    ASSERT_EQ(seen[k], near_a_face(global, local + origin, static_cast<std::int64_t>(w)) ? 1 : 0)
        << "site " << k << " of a block of " << n.volume() << " at " << origin.coords[0] << ", width " << w;
  }
}

TEST(EdgeBoxes, HoldEachEdgeSiteOfABlockOnce) {
  for (std::size_t w : {1, 2, 5, 40}) {
    check_edge_boxes<1>(Index<1>{0}, Extent<1>{37}, Extent<1>{37}, w);
    check_edge_boxes<1>(Index<1>{10}, Extent<1>{9}, Extent<1>{37}, w);
    check_edge_boxes<2>(Index<2>{0, 0}, Extent<2>{13, 11}, Extent<2>{13, 11}, w);
    check_edge_boxes<2>(Index<2>{0, 6}, Extent<2>{13, 5}, Extent<2>{13, 11}, w);  // the top slab
    check_edge_boxes<2>(Index<2>{7, 3}, Extent<2>{6, 4}, Extent<2>{13, 11}, w);   // touches only +x
    check_edge_boxes<3>(Index<3>{0, 0, 0}, Extent<3>{7, 6, 5}, Extent<3>{7, 6, 5}, w);
    check_edge_boxes<3>(Index<3>{3, 0, 2}, Extent<3>{4, 6, 3}, Extent<3>{7, 6, 5}, w);
  }
  // A block in the middle of a large domain holds no edge site: the launch is skipped.
  EXPECT_EQ(detail::EdgeBoxes<2>(Index<2>{8, 8}, Extent<2>{8, 8}, Extent<2>{32, 32}, 1).volume(), 0u);
}

}  // namespace
