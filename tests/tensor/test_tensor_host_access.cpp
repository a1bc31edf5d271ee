// Host access: zero initialisation, fill_from/gather_to round trips for float and a Record in
// every layout, writes through HostAccess/set seen by device kernels and back, fill, resize,
// and the docs example.
#include "tensor_test_support.hpp"

#include <vector>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorHostAccess : public OnDevices {};

// Every site of every block, padding included, through the blocks' own views.
template <typename T, std::size_t D, Layout L, typename F>
void for_each_stored_site(const Tensor<T, D, L>& t, F&& f) {
  const auto h = t.host(Access::read);
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const BlockGeometry<D>& g = t.geometry(b);
    for_each_index(Box<D>(g.interior.extent()).grown(g.padding),
                   [&](const Index<D>& local) { f(b, local + g.interior.lo, T(h.block(b).at(local))); });
  }
}

TEST_P(TensorHostAccess, EverySiteStartsZero) {
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};
  o.with_padding(1);
  Tensor<Particle<float>, 3, Strided> t(memory(), {5, 4, 4}, o);
  std::size_t sites = 0;
  for_each_stored_site(t, [&](std::size_t, const Index<3>&, const Particle<float>& p) {
    EXPECT_TRUE(same(p, Particle<float>{}));
    ++sites;
  });
  EXPECT_EQ(sites, 4u * (7 * 4 * 4));  // four blocks of 7 x 4 x 4 padded sites
}

template <typename T, std::size_t D, Layout L, typename Make>
void round_trip(MemoryManager& memory, Extent<D> sizes, TensorOptions<D> o, Make make) {
  Tensor<T, D, L> t(memory, sizes, o);
  std::vector<T> in(sizes.volume()), out(sizes.volume());
  for_each_index(Box<D>(sizes), [&](const Index<D>& i) { in[sizes.linear(i)] = make(code(i)); });
  t.fill_from(in.data());
  t.gather_to(out.data());
  for (std::size_t k = 0; k < in.size(); ++k) ASSERT_TRUE(same(out[k], in[k])) << "site " << k;
  // And each site sits in its own block, at its global index.
  const auto h = t.host(Access::read);
  for_each_index(Box<D>(sizes), [&](const Index<D>& i) { ASSERT_TRUE(same(T(h.at(i)), make(code(i)))); });
}

TEST_P(TensorHostAccess, FillGatherRoundTripFloat) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.sub_partitions = {1, 2};
  o.with_padding(1);
  auto f = [](float v) { return v; };
  round_trip<float, 2, Contiguous>(memory(), {13, 9}, o, f);
  round_trip<float, 2, Strided>(memory(), {13, 9}, o, f);
  round_trip<float, 2, Tiled<8>>(memory(), {13, 9}, o, f);
}

TEST_P(TensorHostAccess, FillGatherRoundTripRecord) {
  TensorOptions<3> o;
  o.partitions = {2, 1, 2};
  o.with_padding(1);
  round_trip<Particle<float>, 3, Contiguous>(memory(), {7, 3, 4}, o, particle);
  round_trip<Particle<float>, 3, Strided>(memory(), {7, 3, 4}, o, particle);
  round_trip<Particle<float>, 3, Tiled<8>>(memory(), {7, 3, 4}, o, particle);
}

TEST_P(TensorHostAccess, HostWritesSurviveADeviceRoundTrip) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.with_padding(1);
  Tensor<float, 2, Strided> t(memory(), {6, 5}, o);
  {
    auto h = t.host(Access::write);
    for_each_index(Box<2>(t.size()), [&](const Index<2>& i) { h(i[0], i[1]) = code(i); });
  }
  add_on_devices(t, 1.0f);  // each block's kernel runs in its own space
  for (std::size_t b = 0; b < t.num_blocks(); ++b)
    EXPECT_TRUE(t.buffer(b).valid_rows(t.space(b)).contains(t.buffer(b).all()));
  t.set({3, 4}, -7.0f);     // one row back to the host and changed there
  add_on_devices(t, 1.0f);  // ... and to the device again
  std::vector<float> out(t.size().volume());
  t.gather_to(out.data());
  for_each_index(Box<2>(t.size()), [&](const Index<2>& i) {
    const float expected = i == Index<2>{3, 4} ? -6.0f : code(i) + 2.0f;
    EXPECT_EQ(out[t.size().linear(i)], expected) << i[0] << "," << i[1];
  });
  EXPECT_EQ(t.get({0, 0}), 3.0f);
  EXPECT_EQ(t.get({-1, 0}), 0.0f);  // padding is reachable by global index
}

TEST_P(TensorHostAccess, FillCoversPadding) {
  TensorOptions<2> o;
  o.partitions = {2, 1};
  o.with_padding(2);
  Tensor<Particle<float>, 2, Tiled<8>> t(memory(), {6, 3}, o);
  t.fill(particle(2.5f));
  for_each_stored_site(t, [&](std::size_t, const Index<2>&, const Particle<float>& p) {
    EXPECT_TRUE(same(p, particle(2.5f)));
  });
}

TEST_P(TensorHostAccess, ResizeKeepsTheOverlap) {
  TensorOptions<2> o;
  o.partitions = {2, 1};
  o.with_padding(1);
  Tensor<float, 2> t(memory(), {6, 4}, o);
  std::vector<float> in(24);
  for_each_index(Box<2>(t.size()), [&](const Index<2>& i) { in[t.size().linear(i)] = code(i); });
  t.fill_from(in.data());
  t.load_boundary(ConstantBoundary{9.0f});

  t.resize({4, 7});
  EXPECT_EQ(t.size(), (Extent<2>{4, 7}));
  EXPECT_EQ(t.geometry(1).interior, (Box<2>{{2, 0}, {4, 7}}));
  // Interior sites of [0, 4) x [0, 4) keep their values; everything else, padding included
  // (inner padding too, until exchange_padding), starts over at zero.
  for_each_stored_site(t, [&](std::size_t b, const Index<2>& i, float v) {
    const bool kept = t.geometry(b).interior.contains(i) && i[1] < 4;
    EXPECT_EQ(v, kept ? code(i) : 0.0f) << i[0] << "," << i[1];
  });
}

// The example of docs/tensor.md; keep the text between the DOC markers identical.
TEST(TensorDocs, Example) {
  // DOC tensor-example begin
  auto devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::MemoryManager memory(devices);

  // 8 x 6 floats in 2 x 1 partitions (one per device), each split in 1 x 2 sub-partitions:
  // 4 blocks of 4 x 3, numbered x fastest; one site of padding around each.
  tessera::TensorOptions<2> options;
  options.partitions = {2, 1};
  options.sub_partitions = {1, 2};
  options.with_padding(1).named("u");
  tessera::Tensor<float, 2> u(memory, {8, 6}, options);

  std::vector<float> init(u.size().volume());
  for (std::size_t k = 0; k < init.size(); ++k) init[k] = static_cast<float>(k);  // u(x, y) = x + 8 y
  u.fill_from(init.data());

  u.load_boundary(tessera::ZeroGradient{});  // outer padding: copy of the nearest face site
  u.exchange_padding();                      // inner padding: copy of the neighbour's site

  {
    auto h = u.host(tessera::Access::read);
    float left = h(-1, 2);                     // 16: u(0, 2)
    float corner = h(8, -1);                   // 7: u(7, 0)
    float halo = h.block(0).at({4, 1});        // 12: block 0's copy of u(4, 1), from block 1
    // DOC tensor-example end
    EXPECT_EQ(left, 16.0f);
    EXPECT_EQ(corner, 7.0f);
    EXPECT_EQ(halo, 12.0f);
    EXPECT_EQ(u.num_blocks(), 4u);
    EXPECT_EQ(u.space(1), 2u);
    EXPECT_EQ(u.space(2), 1u);
  }
}

TENSOR_TEST_ON_DEVICES(TensorHostAccess);

}  // namespace
