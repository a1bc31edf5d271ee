// Index, Extent, Box and difference(), checked against brute force over every grid point.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

#include "tessera/core/core.hpp"

using tessera::Box;
using tessera::BoxList;
using tessera::Extent;
using tessera::Index;

namespace {

// Membership written out from the definition, independent of Box::contains.
template <std::size_t D>
bool in_box(const Box<D>& b, const Index<D>& p) {
  for (std::size_t d = 0; d < D; ++d)
    if (p.coords[d] < b.lo.coords[d] || p.coords[d] >= b.hi.coords[d]) return false;
  return true;
}

// Mostly non-empty boxes near the origin, with some empty and inverted ones mixed in.
template <std::size_t D>
Box<D> random_box(std::mt19937& rng) {
  std::uniform_int_distribution<int> lo_dist(-4, 5);
  std::uniform_int_distribution<int> size_dist(-1, 6);
  Box<D> b;
  for (std::size_t d = 0; d < D; ++d) {
    b.lo.coords[d] = lo_dist(rng);
    b.hi.coords[d] = b.lo.coords[d] + size_dist(rng);
  }
  return b;
}

// Covers every box random_box can make, with a margin.
template <std::size_t D>
constexpr Box<D> probe_region() {
  return Box<D>{Index<D>::filled(-6), Index<D>::filled(13)};
}

template <std::size_t D>
std::vector<Index<D>> points_by_nested_loops(const Box<D>& b) {
  std::vector<Index<D>> out;
  if constexpr (D == 1) {
    for (auto x = b.lo[0]; x < b.hi[0]; ++x) out.push_back(Index{x});
  } else if constexpr (D == 2) {
    for (auto y = b.lo[1]; y < b.hi[1]; ++y)
      for (auto x = b.lo[0]; x < b.hi[0]; ++x) out.push_back(Index{x, y});
  } else {
    static_assert(D == 3);
    for (auto z = b.lo[2]; z < b.hi[2]; ++z)
      for (auto y = b.lo[1]; y < b.hi[1]; ++y)
        for (auto x = b.lo[0]; x < b.hi[0]; ++x) out.push_back(Index{x, y, z});
  }
  return out;
}

// Checks that difference(a, b) is exactly a \ b, as disjoint non-empty pieces inside a.
template <std::size_t D>
void expect_exact_difference(const Box<D>& a, const Box<D>& b) {
  const BoxList<D> pieces = tessera::difference(a, b);
  ASSERT_LE(pieces.size(), 2 * D);
  for (const Box<D>& piece : pieces) {
    EXPECT_FALSE(piece.empty()) << "a=" << a << " b=" << b << " piece=" << piece;
    EXPECT_TRUE(a.contains(piece)) << "a=" << a << " b=" << b << " piece=" << piece;
  }
  std::size_t expected_volume = 0;
  tessera::for_each_index(probe_region<D>(), [&](const Index<D>& p) {
    int covering = 0;
    for (const Box<D>& piece : pieces) covering += in_box(piece, p) ? 1 : 0;
    const bool wanted = in_box(a, p) && !in_box(b, p);
    expected_volume += wanted ? 1 : 0;
    // covering == 1 where wanted (union is exact) and never 2 (pieces are disjoint).
    EXPECT_EQ(covering, wanted ? 1 : 0) << "a=" << a << " b=" << b << " p=" << p;
  });
  std::size_t piece_volume = 0;
  for (const Box<D>& piece : pieces) piece_volume += piece.volume();
  EXPECT_EQ(piece_volume, expected_volume);
}

template <std::size_t D>
void check_random_differences(unsigned seed, int rounds) {
  std::mt19937 rng(seed);
  for (int r = 0; r < rounds; ++r) {
    const Box<D> a = random_box<D>(rng);
    // Bias half the cases towards overlapping boxes, where the interesting splits happen.
    Box<D> b = random_box<D>(rng);
    if (r % 2 == 0 && !a.empty()) b = b.shifted(a.lo - b.lo);
    expect_exact_difference(a, b);
    if (::testing::Test::HasFailure()) return;
  }
}

template <std::size_t D>
void check_random_intersections(unsigned seed, int rounds) {
  std::mt19937 rng(seed);
  for (int r = 0; r < rounds; ++r) {
    const Box<D> a = random_box<D>(rng);
    const Box<D> b = random_box<D>(rng);
    const Box<D> c = a.intersect(b);
    EXPECT_EQ(c, b.intersect(a));
    std::size_t both = 0;
    bool b_inside_a = true;
    tessera::for_each_index(probe_region<D>(), [&](const Index<D>& p) {
      const bool in_both = in_box(a, p) && in_box(b, p);
      both += in_both ? 1 : 0;
      if (in_box(b, p) && !in_box(a, p)) b_inside_a = false;
      EXPECT_EQ(c.contains(p), in_both) << "a=" << a << " b=" << b << " p=" << p;
    });
    EXPECT_EQ(c.volume(), both);
    EXPECT_EQ(c.empty(), both == 0);
    EXPECT_EQ(a.contains(b), b_inside_a) << "a=" << a << " b=" << b;
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace

TEST(Dims, TagsConvertToPositions) {
  static_assert(std::size_t{tessera::dim_x} == 0);
  static_assert(std::size_t{tessera::dim_y} == 1);
  static_assert(std::size_t{tessera::dim_z} == 2);
  static_assert(decltype(tessera::dim<3>)::value == 3);

  Index i{7, 8, 9};
  Extent e{4, 5, 6};
  EXPECT_EQ(i[tessera::dim_y], 8);
  EXPECT_EQ(e[tessera::dim_z], 6u);
  i[tessera::dim_x] = -1;
  EXPECT_EQ(i[0], -1);
  const std::size_t axis = tessera::dim_z;  // usable where a runtime position is wanted
  EXPECT_EQ(i[axis], 9);
}

TEST(Index, DeductionConstructionAndArithmetic) {
  static_assert(std::is_same_v<decltype(Index{1, 2}), Index<2>>);
  static_assert(std::is_same_v<decltype(Index{1, 2, 3}), Index<3>>);
  static_assert(std::is_same_v<decltype(Extent{4u, 3u}), Extent<2>>);
  static_assert(!std::is_convertible_v<int, Index<1>>, "a bare integer must not become a point");
  static_assert(Index<3>{} == Index{0, 0, 0});

  constexpr Index a{1, -2, 3};
  constexpr Index b{10, 20, 30};
  static_assert(a + b == Index{11, 18, 33});
  static_assert(b - a == Index{9, 22, 27});
  static_assert(-a == Index{-1, 2, -3});
  static_assert(a != b);
  static_assert(Index<2>::filled(-3) == Index{-3, -3});

  static_assert(Extent{2, 3} + Extent{1, 1} == Extent{3, 4});
  static_assert(Extent{2, 3} - Extent{1, 1} == Extent{1, 2});
  static_assert(Extent{2, 3} != Extent{3, 2});
  static_assert(Extent{4, 3, 2}.volume() == 24);
  static_assert(Extent{4, 0, 2}.volume() == 0);
  static_assert(Extent<3>::filled(2).volume() == 8);
}

TEST(Extent, ContainsChecksBothEnds) {
  constexpr Extent e{4, 3};
  static_assert(e.contains(Index{0, 0}));
  static_assert(e.contains(Index{3, 2}));
  static_assert(!e.contains(Index{4, 0}));
  static_assert(!e.contains(Index{0, 3}));
  static_assert(!e.contains(Index{-1, 0}));
  EXPECT_FALSE((Extent{0, 5}.contains(Index{0, 0})));
}

TEST(Extent, XIsFastestInLinearOrder) {
  constexpr Extent e{4, 3, 2};
  static_assert(e.linear(Index{1, 0, 0}) == 1);
  static_assert(e.linear(Index{0, 1, 0}) == 4);
  static_assert(e.linear(Index{0, 0, 1}) == 12);
  static_assert(e.linear(Index{3, 2, 1}) == 23);
  static_assert(e.delinear(13) == Index{1, 0, 1});
  // The last coordinate is not wrapped, so one-past-the-end stays invertible.
  static_assert(e.delinear(24) == Index{0, 0, 2});
}

TEST(Extent, LinearDelinearRoundTripOverWhole3DExtent) {
  const Extent e{5, 4, 3};
  std::size_t expected = 0;
  for (std::int64_t z = 0; z < 3; ++z)
    for (std::int64_t y = 0; y < 4; ++y)
      for (std::int64_t x = 0; x < 5; ++x, ++expected) {
        const Index p{x, y, z};
        ASSERT_TRUE(e.contains(p));
        ASSERT_EQ(e.linear(p), expected) << p;
        ASSERT_EQ(e.delinear(expected), p) << expected;
      }
  EXPECT_EQ(expected, e.volume());
  for (std::size_t n = 0; n < e.volume(); ++n) ASSERT_EQ(e.linear(e.delinear(n)), n);
}

TEST(Extent, RowStartIsTheFirstSiteOfEachRow) {
  const Extent e{5, 4, 3};
  for (std::size_t row = 0; row < 4 * 3; ++row) {
    const Index<3> first = e.row_start(row);
    ASSERT_EQ(first.coords[0], 0) << row;
    ASSERT_EQ(e.linear(first), row * 5) << row;
  }
  static_assert(Extent<1>{7}.row_start(0) == Index<1>{0});
  static_assert(Extent{2, 3, 4, 5}.row_start(7) == Index{0, 1, 2, 0});
}

TEST(Extent, WorksBeyondThreeDimensions) {
  constexpr Extent e{2, 3, 4, 5};
  static_assert(e.volume() == 120);
  static_assert(e[tessera::dim<3>] == 5);
  static_assert(e.linear(Index{1, 2, 3, 4}) == 1 + 2 * 2 + 3 * 6 + 4 * 24);
  for (std::size_t n = 0; n < e.volume(); ++n) {
    const Index<4> p = e.delinear(n);
    ASSERT_TRUE(e.contains(p)) << p;
    ASSERT_EQ(e.linear(p), n);
  }
}

TEST(Box, BasicQueries) {
  constexpr Box<2> b{{1, 2}, {4, 6}};
  static_assert(!b.empty());
  static_assert(b.volume() == 12);
  static_assert(b.extent() == Extent{3, 4});
  static_assert(b.contains(Index{1, 2}));
  static_assert(b.contains(Index{3, 5}));
  static_assert(!b.contains(Index{4, 5}));
  static_assert(!b.contains(Index{3, 6}));
  static_assert(!b.contains(Index{0, 3}));
  static_assert(b.shifted(Index{-1, 10}) == Box<2>{{0, 12}, {3, 16}});
  static_assert(b.grown(1) == Box<2>{{0, 1}, {5, 7}});
  static_assert(b.grown(Index{0, 2}) == Box<2>{{1, 0}, {4, 8}});
  static_assert(b.grown(-2).empty());  // shrinking past the middle empties it

  static_assert(Box{Extent{4, 3}} == Box<2>{{0, 0}, {4, 3}});
  static_assert(Box<3>{}.empty());

  constexpr Box<2> inverted{{5, 0}, {2, 4}};
  static_assert(inverted.empty());
  static_assert(inverted.volume() == 0);
  static_assert(inverted.extent() == Extent{0, 4});
  // All empty boxes are the same (empty) set.
  static_assert(inverted == Box<2>{});
  static_assert(inverted != b);
  static_assert(b.contains(inverted));
  static_assert(!inverted.contains(b));

  static_assert(b.contains(b));
  static_assert(b.contains(Box<2>{{2, 3}, {4, 6}}));
  static_assert(!b.contains(Box<2>{{2, 3}, {5, 6}}));
}

TEST(Box, OneDimensionalBoxesWork) {
  const Box b{Index{2}, Index{7}};
  static_assert(std::is_same_v<decltype(b), const Box<1>>);
  EXPECT_EQ(b.volume(), 5u);
  EXPECT_EQ(b.intersect(Box{Index{5}, Index{9}}), (Box{Index{5}, Index{7}}));
}

TEST(Box, ForEachIndexVisitsInLinearOrder) {
  const Box<3> b{{-1, 2, 0}, {2, 4, 3}};
  std::vector<Index<3>> seen;
  tessera::for_each_index(b, [&](const Index<3>& p) { seen.push_back(p); });
  EXPECT_EQ(seen, points_by_nested_loops(b));
  ASSERT_EQ(seen.size(), b.volume());
  // x fastest: the n-th point is delinear(n) of the box's extent, offset by lo.
  for (std::size_t n = 0; n < seen.size(); ++n) EXPECT_EQ(seen[n], b.extent().delinear(n) + b.lo);

  int calls = 0;
  tessera::for_each_index(Box<3>{{0, 0, 0}, {4, 0, 4}}, [&](const Index<3>&) { ++calls; });
  tessera::for_each_index(Box<2>{{3, 0}, {1, 4}}, [&](const Index<2>&) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(Box, IntersectMatchesBruteForce) {
  check_random_intersections<1>(11u, 300);
  check_random_intersections<2>(12u, 300);
  check_random_intersections<3>(13u, 150);
}

TEST(Box, IntersectOfDisjointBoxesIsEmpty) {
  constexpr Box<2> a{{0, 0}, {2, 2}};
  constexpr Box<2> touching{{2, 0}, {4, 2}};  // half-open: shares no point with a
  static_assert(a.intersect(touching).empty());
  static_assert(a.intersect(touching) == Box<2>{});
  static_assert(a.intersect(touching).lo == Index<2>{});
  static_assert(a.intersect(Box<2>{{1, 1}, {9, 9}}) == Box<2>{{1, 1}, {2, 2}});
}

TEST(Box, DifferenceEdgeCases) {
  const Box<2> a{{0, 0}, {4, 4}};

  // b covers a: nothing left.
  EXPECT_TRUE(tessera::difference(a, Box<2>{{-1, -1}, {5, 5}}).empty());
  EXPECT_TRUE(tessera::difference(a, a).empty());

  // Disjoint (including merely touching) or empty b: a itself.
  for (const Box<2>& b : {Box<2>{{4, 0}, {6, 4}}, Box<2>{{10, 10}, {12, 12}}, Box<2>{}}) {
    const BoxList<2> d = tessera::difference(a, b);
    ASSERT_EQ(d.size(), 1u) << b;
    EXPECT_EQ(d[0], a);
  }

  // Empty a: nothing, whatever b is.
  EXPECT_TRUE(tessera::difference(Box<2>{{3, 3}, {1, 5}}, a).empty());
  EXPECT_TRUE(tessera::difference(Box<2>{}, Box<2>{}).empty());

  // b strictly inside a: all 2*D slabs are needed.
  const BoxList<2> ring = tessera::difference(a, Box<2>{{1, 1}, {3, 3}});
  EXPECT_EQ(ring.size(), 4u);
  expect_exact_difference(a, Box<2>{{1, 1}, {3, 3}});
  const Box<3> cube{{0, 0, 0}, {5, 5, 5}};
  EXPECT_EQ(tessera::difference(cube, cube.grown(-1)).size(), 6u);
  expect_exact_difference(cube, cube.grown(-1));

  // b cuts one side off: one piece.
  const BoxList<2> side = tessera::difference(a, Box<2>{{2, -5}, {9, 9}});
  ASSERT_EQ(side.size(), 1u);
  EXPECT_EQ(side[0], (Box<2>{{0, 0}, {2, 4}}));
}

TEST(Box, DifferenceMatchesBruteForce1D) { check_random_differences<1>(101u, 400); }
TEST(Box, DifferenceMatchesBruteForce2D) { check_random_differences<2>(202u, 400); }
TEST(Box, DifferenceMatchesBruteForce3D) { check_random_differences<3>(303u, 200); }

namespace {
constexpr std::size_t ring_volume() {
  std::size_t v = 0;
  for (const Box<2>& piece : tessera::difference(Box<2>{{0, 0}, {4, 4}}, Box<2>{{1, 1}, {3, 3}}))
    v += piece.volume();
  return v;
}
constexpr std::int64_t sum_of_x_in(const Box<2>& b) {
  std::int64_t s = 0;
  tessera::for_each_index(b, [&](const Index<2>& p) { s += p[tessera::dim_x]; });
  return s;
}
}  // namespace

TEST(Box, UsableInConstantExpressions) {
  static_assert(ring_volume() == 16 - 4);
  static_assert(tessera::difference(Box<3>{{0, 0, 0}, {2, 2, 2}}, Box<3>{}).size() == 1);
  static_assert(sum_of_x_in(Box<2>{{0, 0}, {3, 2}}) == 2 * (0 + 1 + 2));
  SUCCEED();
}

TEST(Format, PrintsReadably) {
  std::ostringstream os;
  os << Index{1, -2, 3} << ' ' << Extent{4, 3} << ' ' << Box<2>{{0, 0}, {4, 3}};
  EXPECT_EQ(os.str(), "(1, -2, 3) 4x3 [(0, 0), (4, 3))");
}

// docs/core.md shows this test's body verbatim; keep the two in step.
TEST(CoreDocs, Example) {
  // An 8x6 domain and a 4x3 tile in it; the tile reads a one-cell halo from its neighbours.
  const tessera::Box<2> domain{tessera::Extent{8, 6}};
  const tessera::Box<2> tile{{4, 0}, {8, 3}};
  const tessera::Box<2> halo = tile.grown(1).intersect(domain);  // clipped: [(3, 0), (8, 4))
  const tessera::BoxList<2> ring = tessera::difference(halo, tile);
  std::size_t ring_cells = 0;
  for (const tessera::Box<2>& piece : ring) ring_cells += piece.volume();
  EXPECT_EQ(ring.size(), 2u);  // a column at x = 3, a row at y = 3
  EXPECT_EQ(ring_cells, halo.volume() - tile.volume());

  const tessera::Extent size = tile.extent();  // 4x3, x fastest in memory
  EXPECT_EQ(size.linear(tessera::Index{1, 2}), 1u + 2u * 4u);
  EXPECT_EQ(size.delinear(9), (tessera::Index{1, 2}));
  EXPECT_EQ(size[tessera::dim_y], 3u);
}
