// Boundary loaders on partitioned tensors in 1-D, 2-D and 3-D: every stored site of every block
// (outer padding, edges and corners included) against the closed form a hand computation gives:
// ZeroGradient clamps each coordinate into the domain, Reflective mirrors it (-1 - c, 2n - 1 - c),
// Periodic wraps it, ConstantBoundary is the constant. Plus literal values for small cases.
#include "tensor_test_support.hpp"

#include <vector>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorBoundary : public OnDevices {};

template <std::size_t D>
bool outside(const Index<D>& s, const Extent<D>& n) { return !n.contains(s); }

// Where site s (outside the domain) takes its value from, coordinate by coordinate.
template <std::size_t D>
Index<D> source(ZeroGradient, Index<D> s, const Extent<D>& n) {
  for (std::size_t d = 0; d < D; ++d) s[d] = std::clamp<std::int64_t>(s[d], 0, static_cast<std::int64_t>(n[d]) - 1);
  return s;
}
template <std::size_t D>
Index<D> source(Reflective, Index<D> s, const Extent<D>& n) {
  for (std::size_t d = 0; d < D; ++d) {
    const auto nd = static_cast<std::int64_t>(n[d]);
    if (s[d] < 0) s[d] = -1 - s[d];
    if (s[d] >= nd) s[d] = 2 * nd - 1 - s[d];
  }
  return s;
}
template <std::size_t D>
Index<D> source(Periodic, Index<D> s, const Extent<D>& n) {
  for (std::size_t d = 0; d < D; ++d) s[d] = (s[d] + static_cast<std::int64_t>(n[d])) % static_cast<std::int64_t>(n[d]);
  return s;
}

template <std::size_t D, typename B>
float expected_float(const B& loader, const Index<D>& s, const Extent<D>& n) {
  if constexpr (requires { loader.value; })
    return loader.value;
  else
    return code(source(loader, s, n));
}

template <std::size_t D, typename B>
Particle<float> expected_particle(const B& loader, const Index<D>& s, const Extent<D>& n) {
  if constexpr (requires { loader.value; }) {
    return loader.value;
  } else {
    Particle<float> p = particle(code(source(loader, s, n)));
    if constexpr (std::is_same_v<B, Reflective>)
      for (std::size_t d = 0; d < D; ++d)
        if (s[d] < 0 || s[d] >= static_cast<std::int64_t>(n[d])) p.velocity()[d] = -p.velocity()[d];
    return p;
  }
}

// Loads the boundary, checks every stored site (inner padding still zero), exchanges the
// padding, checks again (inner padding now the neighbours' values).
template <typename T, std::size_t D, Layout L, typename B, typename Value, typename Expected>
void check_loader(MemoryManager& memory, Extent<D> sizes, TensorOptions<D> o, const B& loader, Value value,
                  Expected expected) {
  Tensor<T, D, L> t(memory, sizes, o);
  std::vector<T> in(sizes.volume());
  for_each_index(Box<D>(sizes), [&](const Index<D>& i) { in[sizes.linear(i)] = value(code(i)); });
  t.fill_from(in.data());
  t.load_boundary(loader);
  for (bool exchanged : {false, true}) {
    if (exchanged) t.exchange_padding();
    const auto h = t.host(Access::read);
    for (std::size_t b = 0; b < t.num_blocks(); ++b) {
      const BlockGeometry<D>& g = t.geometry(b);
      for_each_index(g.interior.grown(g.padding), [&](const Index<D>& s) {
        const T want = outside(s, sizes)             ? expected(loader, s, sizes)
                       : exchanged || g.interior.contains(s) ? value(code(s))
                                                             : T{};
        ASSERT_TRUE(same(T(h.block(b).at(s - g.interior.lo)), want)) << "block " << b << " site " << s[0];
      });
    }
  }
}

template <std::size_t D, typename B>
void check_all_layouts(MemoryManager& memory, Extent<D> sizes, TensorOptions<D> o, const B& loader) {
  auto f = [](float v) { return v; };
  auto ef = [](const auto& l, const Index<D>& s, const Extent<D>& n) { return expected_float(l, s, n); };
  auto ep = [](const auto& l, const Index<D>& s, const Extent<D>& n) { return expected_particle(l, s, n); };
  check_loader<float, D, Contiguous>(memory, sizes, o, loader, f, ef);
  if constexpr (requires { loader.value; }) {
    const ConstantBoundary<Particle<float>> c{particle(loader.value)};
    check_loader<Particle<float>, D, Strided>(memory, sizes, o, c, particle, ep);
    check_loader<Particle<float>, D, Tiled<8>>(memory, sizes, o, c, particle, ep);
  } else if constexpr (std::is_same_v<B, Reflective>) {
    check_loader<Particle<float>, D, Strided>(memory, sizes, o, Reflective{1}, particle, ep);
    check_loader<Particle<float>, D, Tiled<8>>(memory, sizes, o, Reflective{1}, particle, ep);
  } else {
    check_loader<Particle<float>, D, Strided>(memory, sizes, o, loader, particle, ep);
    check_loader<Particle<float>, D, Tiled<8>>(memory, sizes, o, loader, particle, ep);
  }
}

template <typename B>
void check_1d_2d_3d(MemoryManager& memory, const B& loader) {
  TensorOptions<1> o1;
  o1.partitions = Extent<1>{3};
  o1.with_padding(2);
  check_all_layouts<1>(memory, Extent<1>{7}, o1, loader);

  TensorOptions<2> o2;
  o2.partitions = {2, 2};
  o2.sub_partitions = {1, 2};
  o2.with_padding(2);
  check_all_layouts<2>(memory, {6, 8}, o2, loader);

  TensorOptions<3> o3;
  o3.partitions = {2, 1, 2};
  o3.padding = {2, 1, 2};
  check_all_layouts<3>(memory, {4, 5, 4}, o3, loader);
}

TEST_P(TensorBoundary, ZeroGradientEverySite) { check_1d_2d_3d(memory(), ZeroGradient{}); }
TEST_P(TensorBoundary, ReflectiveEverySite) { check_1d_2d_3d(memory(), Reflective{}); }
TEST_P(TensorBoundary, PeriodicEverySite) { check_1d_2d_3d(memory(), Periodic{}); }
TEST_P(TensorBoundary, ConstantEverySite) { check_1d_2d_3d(memory(), ConstantBoundary{-3.0f}); }

TEST_P(TensorBoundary, OneDimensionalByHand) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  o.with_padding(2);
  Tensor<float, 1> t(memory(), Extent<1>{4}, o);
  const float v[] = {1, 2, 3, 4};
  t.fill_from(v);
  auto at = [&](std::int64_t i) { return t.get(Index<1>{i}); };
  t.load_boundary(ZeroGradient{});
  EXPECT_EQ(at(-2), 1.0f); EXPECT_EQ(at(-1), 1.0f); EXPECT_EQ(at(4), 4.0f); EXPECT_EQ(at(5), 4.0f);
  t.load_boundary(Reflective{});
  EXPECT_EQ(at(-2), 2.0f); EXPECT_EQ(at(-1), 1.0f); EXPECT_EQ(at(4), 4.0f); EXPECT_EQ(at(5), 3.0f);
  t.load_boundary(Periodic{});
  EXPECT_EQ(at(-2), 3.0f); EXPECT_EQ(at(-1), 4.0f); EXPECT_EQ(at(4), 1.0f); EXPECT_EQ(at(5), 2.0f);
  t.load_boundary(ConstantBoundary{9.0f}, Face{0, Side::high});  // one face only
  EXPECT_EQ(at(-1), 4.0f); EXPECT_EQ(at(4), 9.0f); EXPECT_EQ(at(5), 9.0f);
}

TEST_P(TensorBoundary, TwoDimensionalCornersByHand) {
  TensorOptions<2> o;
  o.partitions = {1, 3};
  o.with_padding(1);
  Tensor<Particle<float>, 2, Strided> t(memory(), {3, 3}, o);  // u(x, y) = 1 + x + 100 y
  std::vector<Particle<float>> in;
  for (float y = 0; y < 3; ++y)
    for (float x = 0; x < 3; ++x) in.push_back(particle(1 + x + 100 * y));
  t.fill_from(in.data());
  t.load_boundary(ZeroGradient{});
  EXPECT_EQ(t.get({-1, -1}).position()[0], 1.0f);
  EXPECT_EQ(t.get({3, -1}).position()[0], 3.0f);
  EXPECT_EQ(t.get({3, 3}).position()[0], 203.0f);
  t.load_boundary(Periodic{});
  EXPECT_EQ(t.get({-1, -1}).position()[0], 203.0f);
  EXPECT_EQ(t.get({3, 1}).position()[0], 101.0f);
  t.load_boundary(Reflective{1});  // the velocity (2f, 3f, 4f) reflects off each wall it meets
  const Particle<float> corner = t.get({-1, 3});  // mirror of (0, 2): f = 201
  EXPECT_EQ(corner.position()[0], 201.0f);
  EXPECT_EQ(corner.velocity()[0], -402.0f);  // normal to x: flipped
  EXPECT_EQ(corner.velocity()[1], -603.0f);  // normal to y: flipped
  EXPECT_EQ(corner.velocity()[2], 804.0f);   // no z face in 2-D
  const Particle<float> side = t.get({1, -1});  // mirror of (1, 0): f = 2
  EXPECT_EQ(side.velocity()[0], 4.0f);
  EXPECT_EQ(side.velocity()[1], -6.0f);
}

TEST_P(TensorBoundary, NoPaddingIsANoOp) {
  Tensor<float, 2> t(memory(), {4, 4});
  t.fill(1.0f);
  t.load_boundary(Periodic{});
  t.exchange_padding();
  EXPECT_EQ(t.get({3, 3}), 1.0f);
  EXPECT_TRUE(t.halo_transfers().empty());
}

TENSOR_TEST_ON_DEVICES(TensorBoundary);

}  // namespace
