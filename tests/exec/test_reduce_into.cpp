// reduce_into: kernels that reduce as they run. Each site's contribution must be folded exactly
// once, whatever path the CPU loop takes through a row (strips, staged tiles, tile cores and
// edges, rows cut into chunks, edge-only rows), on every device, and the kernel's own writes must
// be unchanged. Contributions are sums of small integers and powers of two, so Sum is exact in
// any order and every result is compared for equality with a sequential pass.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "../tensor/tensor_test_support.hpp"
#include "cell_record.hpp"

using namespace tessera;

namespace {

using exec_test::Cell;

class ReduceInto : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

float a_of(std::int64_t i, std::int64_t j) { return static_cast<float>((7 * i + 3 * j) % 64); }

/// out.a = a(x-1)/2 + a(x+1) + (a(y-1) - a(y+1))/4 and out.v = (a, 2a), contributing out.a:
/// a stencil that reads one site either side along x, as the tiled loops special-case.
struct Stencil {
  template <typename U, typename O, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, O out, C c) const {
    const float s = 0.5f * (*u.offset(0, -1)).a() + (*u.offset(0, 1)).a() +
                    0.25f * ((*u.offset(1, -1)).a() - (*u.offset(1, 1)).a());
    auto o = *out;
    o.a() = s;
    o.v()[0] = (*u).a();
    o.v()[1] = 2.0f * (*u).a();
    *c = static_cast<double>(s);
  }
};

float expected(std::int64_t i, std::int64_t j, std::int64_t nx, std::int64_t ny) {
  auto w = [](std::int64_t k, std::int64_t n) { return ((k % n) + n) % n; };
  return 0.5f * a_of(w(i - 1, nx), j) + a_of(w(i + 1, nx), j) + 0.25f * (a_of(i, w(j - 1, ny)) - a_of(i, w(j + 1, ny)));
}

template <typename L, typename Reducer>
void check_stencil(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions, std::size_t vvl,
                   const Reducer& reducer, std::int64_t x_padding = 1) {
  TensorOptions<2> o;
  o.partitions = partitions;
  o.padding = Index<2>{x_padding, 1};
  Tensor<Cell<>, 2, L> u(memory, n, TensorOptions<2>(o).named("u"));
  Tensor<Cell<>, 2, L> out(memory, n, TensorOptions<2>(o).named("out"));
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  std::vector<Cell<>> us(n.volume());
  double want = Reducer::template identity<double>();
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      us[j * nx + i] = Cell<>(a_of(i, j), {0.0f, 0.0f});
      want = reducer(want, static_cast<double>(expected(i, j, nx, ny)));
    }
  u.fill_from(us.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  ExecOptions eo;
  eo.vvl = vvl;
  ReductionResult<double> result;
  for_each(ex, eo, Stencil{}, read_only(u), out, reduce_into(result, reducer));
  ASSERT_TRUE(result.is_complete());
  EXPECT_EQ(result.value(), want) << L::name << " " << nx << " x " << ny << " in " << partitions.sizes[0] << " x "
                                  << partitions.sizes[1] << " partitions, vvl " << vvl;
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const Cell<>& g = got[j * nx + i];
      ASSERT_TRUE(g.a() == expected(i, j, nx, ny) && g.v()[0] == a_of(i, j) && g.v()[1] == 2.0f * a_of(i, j))
          << L::name << " site (" << i << ", " << j << ")";
    }
}

template <typename Reducer>
void check_layouts(Executor& ex, MemoryManager& memory, const Reducer& reducer) {
  for (std::size_t vvl : {0, 8, 3}) {
    for (auto [n, p] : {std::pair{Extent<2>{61, 5}, Extent<2>{1, 1}}, std::pair{Extent<2>{200, 4}, Extent<2>{2, 1}},
                        std::pair{Extent<2>{16, 3}, Extent<2>{1, 3}}}) {
      check_stencil<Strided>(ex, memory, n, p, vvl, reducer);
      check_stencil<Contiguous>(ex, memory, n, p, vvl, reducer);
      check_stencil<Tiled<8>>(ex, memory, n, p, vvl, reducer);
      check_stencil<Tiled<16>>(ex, memory, n, p, vvl, reducer);
    }
  }
}

/// A y sweep: reads only along y (x_reach = 0), so Tiled rows run as whole tiles and the
/// partial tiles at a row's ends as shorter strips, where Max and Min fold in vector lanes.
struct YStencil {
  static constexpr std::size_t x_reach = 0;
  template <typename U, typename O, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, O out, C c) const {
    const float s = (*u).a() + 0.25f * ((*u.offset(1, -1)).a() - (*u.offset(1, 1)).a());
    auto o = *out;
    o.a() = s;
    *c = static_cast<double>(s) - 0.5 * static_cast<double>(u.global_idx(0) % 5);
  }
};

template <typename L, typename Reducer>
void check_y_sweep(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions, const Reducer& reducer) {
  TensorOptions<2> o;
  o.partitions = partitions;
  o.padding = Index<2>{3, 1};  // tiles that start 3 sites into a row: partial tiles at both ends
  Tensor<Cell<>, 2, L> u(memory, n, TensorOptions<2>(o).named("u")), out(memory, n, TensorOptions<2>(o).named("out"));
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  std::vector<Cell<>> us(n.volume());
  double want = Reducer::template identity<double>();
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) us[j * nx + i] = Cell<>(a_of(i, j), {0.0f, 0.0f});
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const auto w = [ny](std::int64_t k) { return ((k % ny) + ny) % ny; };
      const float s = a_of(i, j) + 0.25f * (a_of(i, w(j - 1)) - a_of(i, w(j + 1)));
      want = reducer(want, static_cast<double>(s) - 0.5 * static_cast<double>(i % 5));
    }
  u.fill_from(us.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  ReductionResult<double> result;
  for_each(ex, YStencil{}, read_only(u), write_only(out), reduce_into(result, reducer));
  EXPECT_EQ(result.value(), want) << L::name << " " << nx << " x " << ny;
}

TEST_P(ReduceInto, YSweepsFoldInLanesInEveryLayout) {
  for (auto [n, p] : {std::pair{Extent<2>{61, 5}, Extent<2>{1, 1}}, std::pair{Extent<2>{200, 4}, Extent<2>{2, 1}},
                      std::pair{Extent<2>{16, 3}, Extent<2>{1, 3}}, std::pair{Extent<2>{5, 7}, Extent<2>{1, 1}}}) {
    check_y_sweep<Strided>(ex, memory(), n, p, Max{});
    check_y_sweep<Contiguous>(ex, memory(), n, p, Min{});
    check_y_sweep<Tiled<8>>(ex, memory(), n, p, Max{});
    check_y_sweep<Tiled<8>>(ex, memory(), n, p, Min{});
    check_y_sweep<Tiled<16>>(ex, memory(), n, p, Max{});
    check_y_sweep<Tiled<16>>(ex, memory(), n, p, Sum{});
  }
}

TEST_P(ReduceInto, EverySiteContributesOnceInEveryLayoutAndPath) {
  check_layouts(ex, memory(), Sum{});
  check_layouts(ex, memory(), Max{});
  check_layouts(ex, memory(), Min{});
}

// A stencil along x in Tiled tensors padded wider than the tiled loops' own paths cover (x
// padding 2 in Tiled<8>, 3 in Tiled<16>): whole strips through the scratch row, not a lane fold.
TEST_P(ReduceInto, TiledRowsOfWiderPaddingFoldThroughTheScratchRow) {
  for (auto [n, p] : {std::pair{Extent<2>{61, 5}, Extent<2>{1, 1}}, std::pair{Extent<2>{40, 4}, Extent<2>{2, 1}}}) {
    check_stencil<Tiled<8>>(ex, memory(), n, p, 0, Max{}, 2);
    check_stencil<Tiled<16>>(ex, memory(), n, p, 0, Min{}, 3);
    check_stencil<Contiguous>(ex, memory(), n, p, 0, Max{}, 2);
  }
}

TEST_P(ReduceInto, ASiteThatStoresNothingContributesTheIdentity) {
  const Extent<3> n{19, 6, 5};
  TensorOptions<3> o;
  o.partitions = Extent<3>{1, 2, 2};
  Tensor<double, 3> t(memory(), n, o.named("t"));
  std::vector<double> v(n.volume());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k % 97) - 40.0;
  t.fill_from(v.data());
  double sum = 0, lowest_even = std::numeric_limits<double>::max();
  for (std::size_t k = 0; k < v.size(); ++k)
    if (k % 2 == 0) {
      sum += v[k];
      lowest_even = std::min(lowest_even, v[k]);
    }
  ReductionResult<double> total, lowest;
  // Only sites of even linear index store; the others must count as 0 for Sum, +max for Min.
  auto even_sites = [] TESSERA_HOST_DEVICE(auto it, auto c) {
    if ((it.global_idx(0) + 19 * (it.global_idx(1) + 6 * it.global_idx(2))) % 2 == 0) *c = *it;
  };
  for_each(ex, even_sites, read_only(t), reduce_into(total, Sum{}));
  for_each(ex, even_sites, read_only(t), reduce_into(lowest, Min{}));
  EXPECT_EQ(total.value(), sum);
  EXPECT_EQ(lowest.value(), lowest_even);
}

TEST_P(ReduceInto, AKernelMayFoldSeveralValuesIntoItsSite) {
  const Extent<2> n{40, 9};
  Tensor<float, 2> t(memory(), n, TensorOptions<2>().named("t"));
  std::vector<float> v(n.volume());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 37) % 101);
  t.fill_from(v.data());
  ReductionResult<float> largest;
  // Each site contributes the larger of its value and twice that value less 150.
  for_each(
      ex,
      [] TESSERA_HOST_DEVICE(auto it, auto c) {
        *c = *it;
        *c = *c < 2.0f * *it - 150.0f ? 2.0f * *it - 150.0f : *c;
      },
      read_only(t), reduce_into(largest, Max{}));
  float want = std::numeric_limits<float>::lowest();
  for (float x : v) want = std::max({want, x, 2.0f * x - 150.0f});
  EXPECT_EQ(largest.value(), want);
}

TEST_P(ReduceInto, RowsCutIntoChunksAndEdgeOnlyKernels) {
  // One long row: the CPU loop cuts it into chunks per worker.
  const Extent<1> n{20011};
  Tensor<double, 1> t(memory(), n, TensorOptions<1>().named("t"));
  ReductionResult<double> sum;
  for_each(
      ex,
      [] TESSERA_HOST_DEVICE(auto it, auto c) {
        *it = static_cast<double>(it.global_idx(0));
        *c = *it;
      },
      t, reduce_into(sum, Sum{}));
  EXPECT_EQ(sum.value(), 20011.0 * 20010.0 / 2.0);
  // Max and Min fold each chunk in vector lanes as it runs: the largest value lies inside a
  // chunk, the smallest at the row's last site, past the last whole strip.
  ReductionResult<double> top, bottom;
  for_each(
      ex, [] TESSERA_HOST_DEVICE(auto it, auto c) { *c = 1000.0 - std::fabs(*it - 12345.0); }, read_only(t),
      reduce_into(top, Max{}));
  for_each(
      ex, [] TESSERA_HOST_DEVICE(auto it, auto c) { *c = std::fabs(*it - 20010.0) + 0.5; }, read_only(t),
      reduce_into(bottom, Min{}));
  EXPECT_EQ(top.value(), 1000.0);
  EXPECT_EQ(bottom.value(), 0.5);

  // An edge kernel runs only the sites within edge_width of the domain's faces.
  const Extent<2> m{33, 21};
  TensorOptions<2> o;
  o.partitions = Extent<2>{2, 3};
  Tensor<float, 2> f(memory(), m, o.named("f"));
  ExecOptions edges;
  edges.edge_width = 2;
  ReductionResult<std::int64_t> count;
  for_each(ex, edges, [] TESSERA_HOST_DEVICE(auto, auto c) { *c = 1; }, f, reduce_into(count, Sum{}));
  EXPECT_EQ(count.value(), 33 * 21 - (33 - 4) * (21 - 4));
}

TEST_P(ReduceInto, ANanContributionMakesMaxNan) {
  const Extent<2> n{45, 7};
  TensorOptions<2> o;
  o.partitions = Extent<2>{3, 1};
  Tensor<double, 2> t(memory(), n, o.named("t"));
  for (std::size_t at : {std::size_t{0}, n.volume() - 1, n.volume() / 2 + 5}) {
    std::vector<double> v(n.volume());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sin(static_cast<double>(k));
    v[at] = std::numeric_limits<double>::quiet_NaN();
    t.fill_from(v.data());
    ReductionResult<double> hi;
    for_each(ex, [] TESSERA_HOST_DEVICE(auto it, auto c) { *c = *it; }, read_only(t), reduce_into(hi, Max{}));
    EXPECT_TRUE(std::isnan(hi.value())) << "NaN at " << at << " dropped: " << hi.value();
  }
}

// Max and Min fold rows as omp simd max/min reductions beside a sum that sends a row with a NaN,
// an infinity or an overflow to the exact fold: both paths, rows of every length modulo the four
// quarters the fast fold splits a row into (and shorter than four), doubles, floats and integers.
template <typename T, typename Reducer>
void check_extreme(Executor& ex, MemoryManager& memory, Extent<2> n, std::vector<T> v, const Reducer& reducer) {
  TensorOptions<2> o;
  o.partitions = Extent<2>{2, 1};
  Tensor<T, 2> t(memory, n, o.named("t"));
  t.fill_from(v.data());
  ReductionResult<T> got;
  for_each(ex, [] TESSERA_HOST_DEVICE(auto it, auto c) { *c = *it; }, read_only(t), reduce_into(got, reducer));
  T want = Reducer::template identity<T>();
  for (const T& x : v) want = reducer(want, x);
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got.value())) << n.sizes[0] << " x " << n.sizes[1];
      return;
    }
  EXPECT_EQ(got.value(), want) << n.sizes[0] << " x " << n.sizes[1];
}

TEST_P(ReduceInto, MaxAndMinAreExactWithInfinitiesHugeValuesAndIntegers) {
  for (const Extent<2> n : {Extent<2>{45, 7}, Extent<2>{64, 3}, Extent<2>{3, 5}, Extent<2>{2, 9}, Extent<2>{130, 2}}) {
    const std::size_t sites = n.volume();
    auto doubles = [&](auto special, std::size_t at) {
      std::vector<double> v(sites);
      for (std::size_t k = 0; k < sites; ++k) v[k] = std::sin(0.7 * static_cast<double>(k)) * 100.0;
      v[at % sites] = special;
      return v;
    };
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const double huge = std::numeric_limits<double>::max();
    for (std::size_t at : {std::size_t{0}, sites / 2 + 1, sites - 1}) {
      check_extreme(ex, memory(), n, doubles(inf, at), Max{});
      check_extreme(ex, memory(), n, doubles(-inf, at), Min{});
      check_extreme(ex, memory(), n, doubles(-inf, at), Max{});
      check_extreme(ex, memory(), n, doubles(nan, at), Min{});
      check_extreme(ex, memory(), n, doubles(nan, at), Max{});
      // Sums of these overflow to infinity, so the row takes the exact fold.
      std::vector<double> big = doubles(huge, at);
      big[(at + 1) % sites] = huge;
      big[(at + 2) % sites] = -huge;
      check_extreme(ex, memory(), n, big, Max{});
      check_extreme(ex, memory(), n, big, Min{});
    }
    check_extreme(ex, memory(), n, doubles(0.5, 0), Max{});
    check_extreme(ex, memory(), n, doubles(0.5, 0), Min{});
    std::vector<float> f(sites);
    for (std::size_t k = 0; k < sites; ++k) f[k] = static_cast<float>(std::cos(1.3 * static_cast<double>(k)));
    check_extreme(ex, memory(), n, f, Max{});
    check_extreme(ex, memory(), n, f, Min{});
    std::vector<std::int64_t> ints(sites);
    for (std::size_t k = 0; k < sites; ++k) ints[k] = (static_cast<std::int64_t>(k) * 7919) % 2003 - 1000;
    check_extreme(ex, memory(), n, ints, Max{});
    check_extreme(ex, memory(), n, ints, Min{});
  }
}

TEST_P(ReduceInto, GivesTheBitsOfReduceOverATensorOfTheSameValues) {
  // What the tensor Jacobi3D did before reduce_into: a tensor of changes, then reduce().
  const Extent<3> n{24, 10, 7};
  TensorOptions<3> o;
  o.partitions = Extent<3>{2, 1, 2};
  o.padding = Index<3>{1, 1, 1};
  Tensor<double, 3> u(memory(), n, o.named("u")), a(memory(), n, o.named("a")), b(memory(), n, o.named("b"));
  TensorOptions<3> plain;
  plain.partitions = o.partitions;
  Tensor<double, 3> change(memory(), n, plain.named("change"));
  std::vector<double> v(n.volume());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::cos(0.37 * static_cast<double>(k));
  u.fill_from(v.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  auto average = [] TESSERA_HOST_DEVICE(auto in) {
    return (*in + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1) + *in.offset(2, -1) +
            *in.offset(2, 1)) /
           7.0;
  };
  for (auto reducer_sum : {false, true}) {
    ReductionResult<double> fused, separate;
    if (reducer_sum) {
      for_each(ex, [=] TESSERA_HOST_DEVICE(auto in, auto out, auto c) { *out = average(in); *c = *out - *in; },
               read_only(u), write_only(a), reduce_into(fused, Sum{}));
      for_each(ex, [=] TESSERA_HOST_DEVICE(auto in, auto out, auto c) { *out = average(in); *c = *out - *in; },
               read_only(u), write_only(b), change);
      reduce(ex, change, separate, Sum{});
      // Sums depend on the order of the fold: within n ulps of each other, not bit-equal.
      EXPECT_NEAR(fused.value(), separate.value(), 1e-12 * static_cast<double>(n.volume()));
    } else {
      for_each(ex, [=] TESSERA_HOST_DEVICE(auto in, auto out, auto c) { *out = average(in); *c = std::fabs(*out - *in); },
               read_only(u), write_only(a), reduce_into(fused, Max{}));
      for_each(ex, [=] TESSERA_HOST_DEVICE(auto in, auto out, auto c) { *out = average(in); *c = std::fabs(*out - *in); },
               read_only(u), write_only(b), change);
      reduce(ex, change, separate, Max{});
      EXPECT_EQ(fused.value(), separate.value());
    }
    std::vector<double> ga(n.volume()), gb(n.volume());
    a.gather_to(ga.data());
    b.gather_to(gb.data());
    EXPECT_EQ(ga, gb);
  }
}

// The example of docs/kernels.md, against a sequential sweep (zero outside the domain).
TEST_P(ReduceInto, DocsExampleFindsTheLargestChangeOfASweep) {
  const Extent<2> n{30, 20};
  TensorOptions<2> o;
  o.partitions = Extent<2>{2, 2};
  o.padding = Index<2>{1, 1};
  Tensor<double, 2> u(memory(), n, o.named("u")), next(memory(), n, o.named("next"));
  std::vector<double> start(n.volume());
  for (std::size_t k = 0; k < start.size(); ++k) start[k] = static_cast<double>((k * 31) % 17);
  u.fill_from(start.data());
  u.exchange_padding();
  // DOC reduce-into begin
  // One Jacobi sweep that also finds the largest change, with no tensor of changes.
  tessera::ReductionResult<double> largest;
  tessera::for_each(
      ex,
      [] TESSERA_HOST_DEVICE(auto in, auto out, auto change) {
        *out = 0.25 * (*in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1));
        *change = std::fabs(*out - *in);
      },
      tessera::read_only(u), tessera::write_only(next), tessera::reduce_into(largest, tessera::Max{}));
  // DOC reduce-into end
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  auto at = [&](std::int64_t i, std::int64_t j) {
    return i < 0 || j < 0 || i >= nx || j >= ny ? 0.0 : start[static_cast<std::size_t>(j * nx + i)];
  };
  double want = 0;
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i)
      want = std::max(want, std::fabs(0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1)) - at(i, j)));
  EXPECT_EQ(largest.value(), want);
}

TENSOR_TEST_ON_DEVICES(ReduceInto);

}  // namespace
