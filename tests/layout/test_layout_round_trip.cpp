// The same values written and read back through Contiguous, Strided and Tiled views, for
// scalars, vectors and mixed records; where each layout puts every byte; and assignment across
// layouts.

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <new>
#include <tessera/tensor/block_geometry.hpp>

#include "layout_test_types.hpp"

using namespace tessera;
using layout_test::Cell;
using layout_test::Particle;
using layout_test::State;

namespace {

struct AlignedBytes {
  explicit AlignedBytes(std::size_t n) : size(n), p(static_cast<std::byte*>(::operator new(n, std::align_val_t{64}))) {
    std::memset(p, 0xEE, n);  // not zero, so a value never written cannot pass as one
  }
  ~AlignedBytes() { ::operator delete(p, std::align_val_t{64}); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  std::size_t size;
  std::byte* p;
};

// A distinct, exactly representable value per (site, component).
Particle<double> particle_at(int i) {
  return Particle<double>({i + 0.25, -i * 2.0, 3.0 + i}, {0.5 * i, 7.0 - i, -0.125 * i});
}
Cell<> cell_at(int i) { return Cell<>(i % 3 == 0, 1.5 * i, {float(i), -float(i) / 4}, 1000 + i); }
State<float, 3> state_at(int i) { return State<float, 3>({float(i), 2.0f * i, 1.0f - i, 0.5f * i, -3.0f * i}); }

template <typename T>
T value_at(int i);
template <>
Particle<double> value_at(int i) { return particle_at(i); }
template <>
Cell<> value_at(int i) { return cell_at(i); }
template <>
State<float, 3> value_at(int i) { return state_at(i); }
template <>
float value_at(int i) { return 0.5f * i - 3; }

template <typename T>
bool same(const T& a, const T& b) {
  if constexpr (std::is_arithmetic_v<T>) {
    return a == b;
  } else {
    bool eq = true;
    [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      ((eq = eq && a.template get<Is>() == b.template get<Is>()), ...);
    }(std::make_index_sequence<T::descriptor::members>{});
    return eq;
  }
}

template <typename T, typename L>
struct Case {
  using type = T;
  using layout = L;
};

template <typename C>
class LayoutRoundTrip : public ::testing::Test {};

using Cases = ::testing::Types<Case<Particle<double>, Contiguous>, Case<Particle<double>, Strided>,
                               Case<Particle<double>, Tiled<8>>, Case<Cell<>, Contiguous>, Case<Cell<>, Strided>,
                               Case<Cell<>, Tiled<8>>, Case<State<float, 3>, Contiguous>, Case<State<float, 3>, Strided>,
                               Case<State<float, 3>, Tiled<16>>, Case<float, Contiguous>, Case<float, Strided>,
                               Case<float, Tiled<8>>>;
TYPED_TEST_SUITE(LayoutRoundTrip, Cases);

TYPED_TEST(LayoutRoundTrip, ValuesReadBackThroughViewsOfTheirLayout) {
  using T = typename TypeParam::type;
  using L = typename TypeParam::layout;
  using LT = LayoutTraits<T, L>;
  constexpr int n = 37;  // not a multiple of any tile or alignment unit
  const std::size_t pitch = LT::row_sites(n);
  ASSERT_GE(pitch, std::size_t{n});
  EXPECT_EQ(LT::row_bytes(n) % 64, 0u) << "rows start 64-byte aligned";
  AlignedBytes mem(LT::row_bytes(n) * 3);
  for (int r = 0; r < 3; ++r)
    for (int x = 0; x < n; ++x) LT::at(mem.p + r * LT::row_bytes(n), x, pitch) = value_at<T>(r * 100 + x);
  for (int r = 0; r < 3; ++r)
    for (int x = 0; x < n; ++x) {
      T back = LT::at(mem.p + r * LT::row_bytes(n), x, pitch);
      EXPECT_TRUE(same(back, value_at<T>(r * 100 + x))) << "row " << r << " site " << x;
    }
}

TYPED_TEST(LayoutRoundTrip, AssignmentAcrossLayoutsKeepsValues) {
  using T = typename TypeParam::type;
  using L = typename TypeParam::layout;
  constexpr int n = 29;
  auto check_into = [&]<typename L2>(L2) {
    using From = LayoutTraits<T, L>;
    using To = LayoutTraits<T, L2>;
    AlignedBytes a(From::row_bytes(n)), b(To::row_bytes(n));
    for (int x = 0; x < n; ++x) From::at(a.p, x, From::row_sites(n)) = value_at<T>(x);
    for (int x = 0; x < n; ++x) To::at(b.p, x, To::row_sites(n)) = From::at(a.p, x, From::row_sites(n));
    for (int x = 0; x < n; ++x) {
      T back = To::at(b.p, x, To::row_sites(n));
      EXPECT_TRUE(same(back, value_at<T>(x))) << L::name << " -> " << L2::name << " site " << x;
    }
  };
  check_into(Contiguous{});
  check_into(Strided{});
  check_into(Tiled<8>{});
  check_into(Tiled<16>{});
}

// Where each layout puts each byte, checked against the formulas in docs/layout.md.
TEST(LayoutPlacement, ContiguousIsAnArrayOfStructs) {
  using LT = LayoutTraits<Cell<>, Contiguous>;
  AlignedBytes mem(LT::row_bytes(10));
  LT::at(mem.p, 3, LT::row_sites(10)) = cell_at(3);
  double pressure;
  std::memcpy(&pressure, mem.p + 3 * 32 + 8, sizeof pressure);
  EXPECT_EQ(pressure, 4.5);
  int id;
  std::memcpy(&id, mem.p + 3 * 32 + 24, sizeof id);
  EXPECT_EQ(id, 1003);
}

TEST(LayoutPlacement, StridedIsOneArrayPerComponentAcrossTheRow) {
  using LT = LayoutTraits<Cell<>, Strided>;
  const std::size_t pitch = LT::row_sites(10);
  AlignedBytes mem(LT::row_bytes(10));
  LT::at(mem.p, 3, pitch) = cell_at(3);
  // Component arrays follow each other: bool[pitch], double[pitch], float[pitch] x2, int[pitch].
  double pressure;
  std::memcpy(&pressure, mem.p + pitch * 1 + 3 * 8, sizeof pressure);
  EXPECT_EQ(pressure, 4.5);
  float flow_y;
  std::memcpy(&flow_y, mem.p + pitch * (9 + 4) + 3 * 4, sizeof flow_y);
  EXPECT_EQ(flow_y, -0.75f);
  int id;
  std::memcpy(&id, mem.p + pitch * 17 + 3 * 4, sizeof id);
  EXPECT_EQ(id, 1003);
}

// Strided runs of fewer than four pages are rounded up to a whole number of 4 KiB pages,
// where that adds at most 1/8 to the row; short rows, and the other layouts, keep the 64-byte
// rounding.
TEST(LayoutPlacement, StridedRunsOfLongRowsAreWholePages) {
  using F = LayoutTraits<Particle<float>, Strided>;
  EXPECT_EQ(F::row_sites(1000), 1024u);  // 4000-byte runs become 4096
  EXPECT_EQ(F::row_sites(1024), 1024u);
  EXPECT_EQ(F::row_sites(100), 104u);    // 1024 would be 10 times the row
  EXPECT_EQ(F::row_sites(1500), 1504u);  // 2048 would add more than 1/8
  using D = LayoutTraits<Particle<double>, Strided>;
  EXPECT_EQ(D::row_sites(1000), 1024u);  // 8000-byte runs become 8192
  EXPECT_EQ(D::row_sites(600), 600u);
  EXPECT_EQ(D::row_bytes(1000) % (6 * 4096), 0u);
  using C = LayoutTraits<Cell<>, Strided>;  // a bool among the members: pages need 4096 sites
  EXPECT_EQ(C::row_sites(4000), 4096u);
  EXPECT_EQ(C::row_sites(1000), 1024u);  // the 64-site rounding a 21-byte site needs anyway
  EXPECT_EQ((LayoutTraits<Particle<float>, Contiguous>::row_sites(1000)), 1000u);
  EXPECT_EQ((LayoutTraits<Particle<float>, Tiled<8>>::row_sites(1000)), 1000u);
}

// Rows not worth paging keep their component runs at least two 64-byte lines past a whole
// number of pages, so the runs a stencil reads at once start in different L1 sets.
TEST(LayoutPlacement, StridedRunsStayTwoLinesOffWholePages) {
  using F = LayoutTraits<Particle<float>, Strided>;
  EXPECT_EQ(F::row_sites(1026), 1056u);  // runs of 4128 bytes (32 past a page) become 4224
  EXPECT_EQ(F::row_sites(2050), 2080u);  // 8224 bytes (32 past two pages) become 8320
  EXPECT_EQ(F::row_sites(1100), 1104u);  // 4416 bytes: 320 past a page, far enough
  EXPECT_EQ(F::row_sites(8), 8u);        // runs shorter than a page are left alone
  for (std::size_t n : {1026u, 2050u, 4098u, 1100u, 3000u, 5000u}) {
    const std::size_t in_page = F::row_sites(n) * sizeof(float) % 4096;
    EXPECT_TRUE(in_page == 0 || (in_page >= 128 && in_page <= 4096 - 128))
        << n << " sites: runs " << in_page << " bytes into a page";
  }
  using D = LayoutTraits<Particle<double>, Strided>;
  EXPECT_EQ(D::row_sites(1030), 1040u);  // 8256 bytes (64 past two pages) become 8320
}

// Runs of four pages or more are never whole pages: they start two lines or more off a page
// boundary, so the runs a stencil reads and writes at once fall in different L1 sets.
TEST(LayoutPlacement, StridedRunsOfFourPagesOrMoreStayOffWholePages) {
  using D = LayoutTraits<Particle<double>, Strided>;
  EXPECT_EQ(D::row_sites(1024), 1024u);  // 8 KiB runs stay whole pages
  EXPECT_EQ(D::row_sites(2048), 2064u);  // 16 KiB runs become 16 KiB and two lines
  EXPECT_EQ(D::row_sites(4096), 4112u);
  EXPECT_EQ(D::row_sites(8192), 8208u);
  EXPECT_EQ(D::row_sites(2000), 2000u);  // 16000 bytes: 3712 into a page, left as they are
  using F = LayoutTraits<Particle<float>, Strided>;
  EXPECT_EQ(F::row_sites(4000), 4000u);  // not rounded up to 4096 sites (16 KiB)
  EXPECT_EQ(F::row_sites(3000), 3072u);  // 12 KiB once paged: still paged
  for (std::size_t n : {2048u, 2049u, 4000u, 4096u, 6000u, 8192u, 16384u}) {
    const std::size_t in_page = D::row_sites(n) * sizeof(double) % 4096;
    EXPECT_TRUE(in_page >= 128 && in_page <= 4096 - 128) << n << " sites: runs " << in_page << " bytes into a page";
  }
}

TEST(LayoutPlacement, TiledIsStridedInsideTilesOfV) {
  using LT = LayoutTraits<Particle<double>, Tiled<8>>;
  AlignedBytes mem(LT::row_bytes(20));
  LT::at(mem.p, 11, LT::row_sites(20)) = particle_at(11);  // tile 1, lane 3
  const std::size_t tile = 8 * 6 * sizeof(double);
  double vy;
  std::memcpy(&vy, mem.p + tile + 8 * (4 * sizeof(double)) + 3 * sizeof(double), sizeof vy);
  EXPECT_EQ(vy, 7.0 - 11);
}

TEST(LayoutBlockView, PaddingAndInteriorRoundTripInTwoDimensions) {
  const auto g = make_block_geometry<Particle<double>, Strided>(Box<2>{{10, 20}, {15, 23}}, Index<2>{2, 1});
  EXPECT_EQ(g.padded_extent(), (Extent<2>{9, 5}));
  EXPECT_EQ(g.rows(), 5u);
  AlignedBytes mem(g.bytes());
  BlockView<Particle<double>, 2, Strided> v{mem.p, g};
  for (int j = -1; j < 4; ++j)
    for (int i = -2; i < 7; ++i) v.at(Index<2>{i, j}) = particle_at(i * 10 + j);
  for (int j = -1; j < 4; ++j)
    for (int i = -2; i < 7; ++i) {
      Particle<double> back = v.at(Index<2>{i, j});
      EXPECT_TRUE(same(back, particle_at(i * 10 + j))) << i << "," << j;
    }
}

}  // namespace
