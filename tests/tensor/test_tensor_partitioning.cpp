// Partition geometry: block boxes, numbering, partitions and spaces against hand-computed
// values (Ripple Listing 1's 1000x1000 split among them), and the block/Buffer contract.
#include "tensor_test_support.hpp"

#include <tessera/core/format.hpp>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorPartitioning : public OnDevices {
 protected:
  // Where partition p lives by default: accelerators round-robin, the host without any.
  std::size_t default_space(std::size_t p) const { return accelerators() == 0 ? 0 : 1 + p % accelerators(); }

  template <typename T, std::size_t D, Layout L>
  static void expect_buffers_match_geometry(const Tensor<T, D, L>& t) {
    for (std::size_t b = 0; b < t.num_blocks(); ++b) {
      EXPECT_EQ(t.buffer(b).rows(), t.geometry(b).rows()) << "block " << b;
      EXPECT_EQ(t.buffer(b).row_bytes(), t.geometry(b).row_bytes) << "block " << b;
      EXPECT_EQ(t.geometry(b).padding, t.padding());
    }
  }
};

TEST_P(TensorPartitioning, RippleListing1SixteenBlocks) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.sub_partitions = {2, 2};
  Tensor<double, 2> t(memory(), {1000, 1000}, o);
  ASSERT_EQ(t.num_blocks(), 16u);
  EXPECT_EQ(t.num_partitions(), 4u);
  EXPECT_EQ(t.blocks_per_dim(), (Extent<2>{4, 4}));
  // Block b = bx + 4 * by holds [250 bx, 250 bx + 250) x [250 by, 250 by + 250); its partition
  // is (bx / 2) + 2 * (by / 2).
  const std::size_t expected_partition[16] = {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3};
  for (std::size_t b = 0; b < 16; ++b) {
    const std::int64_t bx = static_cast<std::int64_t>(b % 4), by = static_cast<std::int64_t>(b / 4);
    EXPECT_EQ(t.geometry(b).interior, (Box<2>{{250 * bx, 250 * by}, {250 * bx + 250, 250 * by + 250}})) << b;
    EXPECT_EQ(t.partition_of(b), expected_partition[b]) << b;
    EXPECT_EQ(t.space(b), default_space(expected_partition[b])) << b;
  }
  expect_buffers_match_geometry(t);
}

TEST_P(TensorPartitioning, RippleListing1PartitionsOnly) {
  TensorOptions<2> o;
  o.partitions = {1, 4};  // slabs along y: Ripple's advice for coalesced halo copies
  Tensor<float, 2> t(memory(), {1000, 1000}, o);
  ASSERT_EQ(t.num_blocks(), 4u);
  for (std::size_t b = 0; b < 4; ++b) {
    const std::int64_t y = 250 * static_cast<std::int64_t>(b);
    EXPECT_EQ(t.geometry(b).interior, (Box<2>{{0, y}, {1000, y + 250}}));
    EXPECT_EQ(t.partition_of(b), b);
  }
}

TEST_P(TensorPartitioning, OneDimensionalUnevenSplit) {
  // 10 cells over 3 partitions: 4, 3, 3 (the first 10 % 3 get one more).
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  Tensor<float, 1> t(memory(), Extent<1>{10}, o);
  ASSERT_EQ(t.num_blocks(), 3u);
  EXPECT_EQ(t.geometry(0).interior, (Box<1>{Index<1>{0}, Index<1>{4}}));
  EXPECT_EQ(t.geometry(1).interior, (Box<1>{Index<1>{4}, Index<1>{7}}));
  EXPECT_EQ(t.geometry(2).interior, (Box<1>{Index<1>{7}, Index<1>{10}}));

  // With 2 sub-partitions each: 4 -> 2, 2; 3 -> 2, 1; 3 -> 2, 1.
  o.sub_partitions = Extent<1>{2};
  Tensor<float, 1> s(memory(), Extent<1>{10}, o);
  const std::int64_t cuts[] = {0, 2, 4, 6, 7, 9, 10};
  const std::size_t partition[] = {0, 0, 1, 1, 2, 2};
  ASSERT_EQ(s.num_blocks(), 6u);
  for (std::size_t b = 0; b < 6; ++b) {
    EXPECT_EQ(s.geometry(b).interior, (Box<1>{Index<1>{cuts[b]}, Index<1>{cuts[b + 1]}})) << b;
    EXPECT_EQ(s.partition_of(b), partition[b]);
    EXPECT_EQ(s.space(b), default_space(partition[b]));
  }
  expect_buffers_match_geometry(s);
}

TEST_P(TensorPartitioning, ThreeDimensionalWithSubPartitions) {
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};
  o.sub_partitions = {2, 1, 1};
  o.with_padding(1);
  Tensor<float, 3, Strided> t(memory(), {8, 6, 5}, o);
  // x: 8 -> 4, 4 (sub-partitions); y: 6 -> 3, 3; z: 5 -> 3, 2. Block b = bx + 2 by + 4 bz.
  const std::int64_t xs[] = {0, 4, 8}, ys[] = {0, 3, 6}, zs[] = {0, 3, 5};
  ASSERT_EQ(t.num_blocks(), 8u);
  EXPECT_EQ(t.num_partitions(), 4u);
  for (std::size_t b = 0; b < 8; ++b) {
    const std::size_t bx = b % 2, by = (b / 2) % 2, bz = b / 4;
    EXPECT_EQ(t.geometry(b).interior, (Box<3>{{xs[bx], ys[by], zs[bz]}, {xs[bx + 1], ys[by + 1], zs[bz + 1]}})) << b;
    EXPECT_EQ(t.partition_of(b), by + 2 * bz) << b;  // x sub-partitions share a partition
  }
  // Block 0: padded extent 6 x 5 x 5, so 25 rows of 6 floats rounded to 16 (64 bytes).
  EXPECT_EQ(t.geometry(0).rows(), 25u);
  EXPECT_EQ(t.geometry(0).pitch, 16u);
  EXPECT_EQ(t.geometry(0).row_bytes, 64u);
  EXPECT_EQ(t.geometry(7).rows(), 5u * 4u);  // y 3 + 2, z 2 + 2
  expect_buffers_match_geometry(t);
}

TEST_P(TensorPartitioning, ExplicitSpacesRoundRobin) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  o.spaces = {0};
  if (accelerators() > 0) o.spaces.push_back(accelerators());  // host, last accelerator
  Tensor<int, 1> t(memory(), Extent<1>{9}, o);
  for (std::size_t b = 0; b < 3; ++b) EXPECT_EQ(t.space(b), o.spaces[b % o.spaces.size()]);
}

TEST_P(TensorPartitioning, BlockOfPrefersTheInterior) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.with_padding(2);
  Tensor<float, 2> t(memory(), {8, 6}, o);  // blocks [0,4)x[0,3), [4,8)x[0,3), ...
  EXPECT_EQ(t.block_of({3, 2}), 0u);
  EXPECT_EQ(t.block_of({4, 2}), 1u);   // in block 0's padding, but block 1's interior
  EXPECT_EQ(t.block_of({-2, 3}), 2u);  // outer padding: the left edge block holding y = 3
  EXPECT_EQ(t.block_of({9, -1}), 1u);
  EXPECT_EQ(t.block_of({9, 7}), 3u);
  EXPECT_THROW(t.block_of({-3, 0}), Error);
  EXPECT_THROW(t.block_of({0, 8}), Error);
}

TEST_P(TensorPartitioning, HaloTransfersList) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.with_padding(1);
  Tensor<float, 2> t(memory(), {4, 4}, o);  // four 2x2 blocks: 0 1 / 2 3
  const std::vector<HaloTransfer<2>> h = t.halo_transfers();
  // Each block gets a column, a row and a corner from its three neighbours.
  const std::vector<HaloTransfer<2>> expected = {
      {1, 0, Box<2>{{2, 0}, {3, 2}}}, {2, 0, Box<2>{{0, 2}, {2, 3}}}, {3, 0, Box<2>{{2, 2}, {3, 3}}},
      {0, 1, Box<2>{{1, 0}, {2, 2}}}, {2, 1, Box<2>{{1, 2}, {2, 3}}}, {3, 1, Box<2>{{2, 2}, {4, 3}}},
      {0, 2, Box<2>{{0, 1}, {2, 2}}}, {1, 2, Box<2>{{2, 1}, {3, 2}}}, {3, 2, Box<2>{{2, 2}, {3, 4}}},
      {0, 3, Box<2>{{1, 1}, {2, 2}}}, {1, 3, Box<2>{{2, 1}, {4, 2}}}, {2, 3, Box<2>{{1, 2}, {2, 4}}},
  };
  EXPECT_EQ(h, expected);
}

TENSOR_TEST_ON_DEVICES(TensorPartitioning);

}  // namespace
