// Halo exchange: after kernels on the devices changed every block, exchange_padding leaves each
// block's inner padding (faces, edges, corners; only the faces a star stencil reads) equal to the
// global array and the rest untouched; whole-row halos between device blocks move on the devices
// (no host round trip).
#include "tensor_test_support.hpp"

#include <vector>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorHalo : public OnDevices {};

// Whether a padding site s of a block with interior `interior` is one `stencil` reads: any for
// box, else one outside the interior along exactly one dimension, which the stencil reads along.
template <std::size_t D>
bool stencil_reads(const Box<D>& interior, const Index<D>& s, const StencilShape& stencil) {
  if (stencil.reads_diagonals()) return true;
  std::size_t outside = 0, along = 0;
  for (std::size_t d = 0; d < D; ++d)
    if (s.coords[d] < interior.lo.coords[d] || s.coords[d] >= interior.hi.coords[d]) ++outside, along = d;
  return outside == 1 && stencil.reads_along(along);
}

// Fills u = code, adds 1 on the devices, exchanges, and checks every stored site: interior and
// the inner padding the stencil reads hold code + 1 (the global array after the kernel); the
// outer padding, and inner padding outside the stencil, still 0.
template <typename T, std::size_t D, Layout L>
void check_exchange(Tensor<T, D, L>& t, const StencilShape& stencil = StencilShape::box()) {
  std::vector<T> in(t.size().volume());
  for_each_index(Box<D>(t.size()), [&](const Index<D>& i) { in[t.size().linear(i)] = static_cast<T>(code(i)); });
  t.fill_from(in.data());
  add_on_devices(t, T(1));
  t.exchange_padding(stencil);
  const auto h = t.host(Access::read);
  std::size_t inner = 0, skipped = 0;
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const BlockGeometry<D>& g = t.geometry(b);
    for_each_index(g.interior.grown(g.padding), [&](const Index<D>& s) {
      const bool in_domain = t.size().contains(s);
      const bool halo = in_domain && !g.interior.contains(s);
      const bool read = !halo || stencil_reads(g.interior, s, stencil);
      inner += halo && read;
      skipped += halo && !read;
      ASSERT_EQ(h.block(b).at(s - g.interior.lo), in_domain && read ? static_cast<T>(code(s)) + T(1) : T(0))
          << "block " << b << " site " << s[0] << (D > 1 ? "," + std::to_string(s[D - 1]) : "");
    });
  }
  EXPECT_GT(inner, 0u);
  if (!stencil.reads_diagonals() && D > 1) {
    EXPECT_GT(skipped, 0u);  // the test reaches sites it must leave
  }
}

TEST_P(TensorHalo, OneDimensional) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  o.sub_partitions = Extent<1>{2};
  o.with_padding(2);
  Tensor<double, 1> t(memory(), Extent<1>{13}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, TwoDimensionalWithSubPartitions) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.sub_partitions = {2, 1};
  o.with_padding(2);
  Tensor<float, 2, Tiled<16>> t(memory(), {11, 9}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, ThreeDimensionalCornersAndEdges) {
  TensorOptions<3> o;
  o.partitions = {2, 2, 2};
  o.padding = {1, 2, 1};
  Tensor<float, 3, Strided> t(memory(), {5, 6, 4}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, WholeRowHalosStayOnTheDevices) {
  // No x padding: every halo is whole rows, so device blocks copy them device to device.
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};
  o.padding = {0, 1, 2};
  Tensor<float, 3> t(memory(), {6, 4, 5}, o);
  std::vector<float> in(t.size().volume());
  for_each_index(Box<3>(t.size()), [&](const Index<3>& i) { in[t.size().linear(i)] = code(i); });
  t.fill_from(in.data());
  add_on_devices(t, 1.0f);
  memory().synchronize();
  const TransferStats before = memory().stats().transferred;
  t.exchange_padding();
  memory().synchronize();
  if (accelerators() > 0) {
    EXPECT_EQ(memory().stats().transferred, before);  // no staging through the host
    for (std::size_t b = 0; b < t.num_blocks(); ++b)
      EXPECT_FALSE(t.buffer(b).valid_rows(0).contains(t.buffer(b).all())) << "block " << b;
  }
  const auto h = t.host(Access::read);
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const BlockGeometry<3>& g = t.geometry(b);
    for_each_index(g.interior.grown(g.padding), [&](const Index<3>& s) {
      const bool in_domain = t.size().contains(s);
      ASSERT_EQ(h.block(b).at(s - g.interior.lo), in_domain ? code(s) + 1.0f : 0.0f)
          << "block " << b << " site " << s[0] << "," << s[1] << "," << s[2];
    });
  }
}

TEST_P(TensorHalo, StarStencilExchangesOnlyFaces) {
  TensorOptions<3> o;
  o.partitions = {2, 2, 2};
  o.padding = {1, 2, 1};
  Tensor<float, 3, Strided> t(memory(), {5, 6, 4}, o);
  check_exchange(t, StencilShape::star());
  TensorOptions<2> o2;
  o2.partitions = {2, 2};
  o2.sub_partitions = {2, 1};
  o2.with_padding(2);
  Tensor<float, 2, Tiled<16>> tiled(memory(), {11, 9}, o2);
  check_exchange(tiled, StencilShape::star());
}

TEST_P(TensorHalo, StencilAlongSomeDimensions) {
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};  // whole rows: between device blocks, copied on the devices
  o.padding = {0, 1, 2};
  Tensor<float, 3> rows(memory(), {6, 4, 5}, o);
  check_exchange(rows, StencilShape::along({2}));
  TensorOptions<2> o2;
  o2.partitions = {3, 2};
  o2.with_padding(1);
  Tensor<double, 2> t(memory(), {12, 7}, o2);
  check_exchange(t, StencilShape::along({0}));
}

// exchange_padding keeps each stencil's transfers once it has found them: on one tensor, every
// exchange in a sequence of different stencils fills exactly the padding its own stencil reads
// with the current values, and every other padding site keeps what the last exchange that read it
// brought.
TEST_P(TensorHalo, RepeatedExchangesWithDifferentStencils) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.sub_partitions = {1, 2};
  o.with_padding(1);
  Tensor<double, 2> t(memory(), {9, 10}, o);
  std::vector<std::vector<double>> expected(t.num_blocks());
  for (std::size_t b = 0; b < t.num_blocks(); ++b)
    expected[b].assign(t.geometry(b).interior.grown(t.geometry(b).padding).volume(), 0.0);
  const StencilShape sequence[] = {StencilShape::along({0}), StencilShape::along({1}), StencilShape::star(),
                                   StencilShape::box(),      StencilShape::along({0}), StencilShape::box(),
                                   StencilShape::star()};
  double round = 0;
  for (const StencilShape& stencil : sequence) {
    round += 1;
    std::vector<double> in(t.size().volume());
    for_each_index(Box<2>(t.size()), [&](const Index<2>& i) { in[t.size().linear(i)] = code(i) + 1000 * round; });
    t.fill_from(in.data());
    add_on_devices(t, 1.0);
    t.exchange_padding(stencil);
    const auto h = t.host(Access::read);
    for (std::size_t b = 0; b < t.num_blocks(); ++b) {
      const BlockGeometry<2>& g = t.geometry(b);
      const Box<2> stored = g.interior.grown(g.padding);
      for_each_index(stored, [&](const Index<2>& s) {
        double& want = expected[b][stored.extent().linear(s - stored.lo)];
        if (g.interior.contains(s) || (t.size().contains(s) && stencil_reads(g.interior, s, stencil)))
          want = code(s) + 1000 * round + 1;
        ASSERT_EQ(h.block(b).at(s - g.interior.lo), want)
            << "exchange " << round << ", block " << b << " site " << s[0] << "," << s[1];
      });
    }
  }
}

TEST(HaloTransfers, StarStencilTakesSixOfTwentySixNeighbours) {
  // 3 x 3 x 3 periodic blocks of 4^3: every block has 26 neighbours, 6 across a face.
  std::vector<Box<3>> interiors;
  for (std::int64_t z = 0; z < 3; ++z)
    for (std::int64_t y = 0; y < 3; ++y)
      for (std::int64_t x = 0; x < 3; ++x)
        interiors.push_back(Box<3>{{4 * x, 4 * y, 4 * z}, {4 * x + 4, 4 * y + 4, 4 * z + 4}});
  const Extent<3> sizes{12, 12, 12};
  const std::array<bool, 3> periodic{true, true, true};
  const Index<3> pad{1, 1, 1};
  const auto box = halo_transfers(interiors, pad, sizes, periodic);
  const auto star = halo_transfers(interiors, pad, sizes, periodic, StencilShape::star());
  const auto x_only = halo_transfers(interiors, pad, sizes, periodic, StencilShape::along({0}));
  EXPECT_EQ(box.size(), 27u * 26u);
  ASSERT_EQ(star.size(), 27u * 6u);
  EXPECT_EQ(x_only.size(), 27u * 2u);
  for (const HaloTransfer<3>& h : star) {
    EXPECT_EQ(h.box.volume(), 16u);  // a 4 x 4 face, one site deep
    // The same copy as the box stencil's transfer between the same blocks and image.
    bool found = false;
    for (const HaloTransfer<3>& b : box) found |= b == h;
    EXPECT_TRUE(found) << h.source << "->" << h.destination;
  }
  for (const HaloTransfer<3>& h : x_only) EXPECT_EQ(h.box.extent().sizes[0], 1u);
}

TEST(HaloTransfers, StencilsNamingMissingDimensionsAreRefused) {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message([] { StencilShape::along({}); }).find("name at least one dimension"), std::string::npos);
  EXPECT_NE(message([] { StencilShape::along({40}); }).find("dimension 40"), std::string::npos);
  const std::vector<Box<2>> interiors{Box<2>{{0, 0}, {4, 4}}, Box<2>{{4, 0}, {8, 4}}};
  EXPECT_NE(message([&] {
              halo_transfers(interiors, Index<2>{1, 1}, {}, {}, StencilShape::along({0, 3}));
            }).find("a stencil along dimension 3 used with a 2-dimensional tensor"),
            std::string::npos);
  EXPECT_EQ(StencilShape::along({0, 1}).plan_index<2>(), StencilShape::star().plan_index<2>());
  EXPECT_EQ(StencilShape::of_plan_index(StencilShape::along({1}).plan_index<3>()), StencilShape::along({1}));
}

TEST_P(TensorHalo, TransferRejectsForeignBlocks) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  o.with_padding(1);
  Tensor<float, 1> t(memory(), Extent<1>{4}, o);
  EXPECT_THROW(t.transfer(HaloTransfer<1>{0, 0, {}}), Error);
  EXPECT_THROW(t.transfer(HaloTransfer<1>{0, 2, {}}), Error);
}

TENSOR_TEST_ON_DEVICES(TensorHalo);

}  // namespace
