// Declared argument access: tessera::read_only(t), tessera::write_only(t) and
// tessera::in_shared(tessera::read_only(t)). A read_only tensor's views only read (checked at
// compile time), its blocks are prepared for reading (so other copies stay valid), and on the
// CPU its Tiled tiles are staged a tile ahead without being copied back; a write_only tensor's
// Tiled tiles are written in place; a read-only in_shared stage is never written back. None of
// it may change a result: every layout, device set and padding gives what the plain call gives,
// against a sequential stencil computed here.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/graph/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../tensor/tensor_test_support.hpp"
#include "cell_record.hpp"

using namespace tessera;

namespace {

using exec_test::Cell;

// A read_only argument's views: members are const references, and the view cannot be assigned,
// so a kernel that writes one does not compile. Reading into owned values and views still works.
template <typename L>
using ReadIt = IndexedIterator<Cell<>, 2, L, Access::read>;
template <typename L>
using ReadViewOf = typename ReadIt<L>::view_type;
template <typename L>
constexpr bool read_views_only_read() {
  using V = ReadViewOf<L>;
  return !std::is_assignable_v<decltype(std::declval<V>().a()), float> &&
         !std::is_assignable_v<decltype(std::declval<V>().v()[0]), float> &&
         !std::is_assignable_v<V&, Cell<>> && std::is_constructible_v<Cell<>, V> &&
         std::is_assignable_v<with_storage_t<Cell<>, View<L>>&, V>;
}
static_assert(read_views_only_read<Contiguous>());
static_assert(read_views_only_read<Strided>());
static_assert(read_views_only_read<Tiled<8>>());
static_assert(std::is_same_v<IndexedIterator<float, 1, Strided, Access::read>::view_type, const float&>);
static_assert(std::is_same_v<IndexedIterator<float, 1, Strided, Access::write>::view_type, float&>);
// The staged iterator the CPU loop hands a kernel for a read_only Tiled tensor reads only too,
// and so does the BlockIterator over an in_shared(read_only(t)) stage.
static_assert(!std::is_assignable_v<
              decltype((*std::declval<detail::StagedTileIterator<Cell<>, 2, 8, 1, Access::read>>()).a()), float>);
static_assert(!std::is_assignable_v<decltype((*std::declval<BlockIterator<Cell<>, 2, Strided, Extent<2>, Access::read>>()).a()),
                                    float>);
static_assert(std::is_same_v<BlockIterator<float, 2, Contiguous, Extent<2>, Access::read>::view_type, const float&>);
static_assert(std::is_same_v<decltype(in_shared(read_only(std::declval<Tensor<float, 1>&>()))),
                             InShared<Tensor<float, 1>, Access::read>>);

class ForEachAccess : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

// Small integers and power-of-two weights: every sum is exact in float, whatever the order.
float a_of(std::int64_t i, std::int64_t j) { return static_cast<float>((7 * i + 3 * j) % 64); }
float v_of(std::int64_t i, std::int64_t j) { return static_cast<float>((5 * i + 11 * j) % 32); }

/// out = sum_k 2^-k (a(x-k) + 2 a(x+k)) + (a(y-1) - a(y+1)) / 4, v = (v(x+R), a(x-1)): reads R
/// sites along x and one along y of u, writes out at its own site only.
template <int R, typename U, typename O>
TESSERA_HOST_DEVICE void stencil(const U& u, const O& out) {
  float s = 0.0f;
  float w = 0.5f;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    ((s += w * ((*u.offset(0, -(K + 1))).a() + 2.0f * (*u.offset(0, K + 1)).a()), w *= 0.5f), ...);
  }(std::make_integer_sequence<int, R>{});
  s += 0.25f * ((*u.offset(1, -1)).a() - (*u.offset(1, 1)).a());
  auto o = *out;
  o.a() = s;
  o.v()[0] = (*u.offset(0, R)).v()[0];
  o.v()[1] = (*u.offset(0, -1)).a();
}

template <int R>
Cell<> expected(std::int64_t i, std::int64_t j, std::int64_t nx, std::int64_t ny) {
  auto w = [](std::int64_t k, std::int64_t n) { return ((k % n) + n) % n; };
  float s = 0.0f, wk = 0.5f;
  for (int k = 1; k <= R; ++k, wk *= 0.5f) s += wk * (a_of(w(i - k, nx), j) + 2.0f * a_of(w(i + k, nx), j));
  s += 0.25f * (a_of(i, w(j - 1, ny)) - a_of(i, w(j + 1, ny)));
  return Cell<>(s, {v_of(w(i + R, nx), j), a_of(w(i - 1, nx), j)});
}

enum class Declared { nothing, read_only_in, both, in_shared_read_only };

template <typename L, int R>
void check(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions, Declared declared) {
  TensorOptions<2> o;
  o.partitions = partitions;
  o.padding = Index<2>{R, 1};
  Tensor<Cell<>, 2, L> u(memory, n, TensorOptions<2>(o).named("u"));
  Tensor<Cell<>, 2, L> out(memory, n, TensorOptions<2>(o).named("out"));
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  std::vector<Cell<>> us(n.volume()), outs(n.volume(), Cell<>(-7.0f, {-7.0f, -7.0f}));
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) us[j * nx + i] = Cell<>(a_of(i, j), {v_of(i, j), 0.0f});
  u.fill_from(us.data());
  out.fill_from(outs.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  auto kernel = [] TESSERA_HOST_DEVICE(auto c, auto d) { stencil<R>(c, d); };
  if (declared == Declared::nothing)
    for_each(ex, kernel, u, out);
  else if (declared == Declared::read_only_in)
    for_each(ex, kernel, read_only(u), out);
  else if (declared == Declared::both)
    for_each(ex, kernel, read_only(u), write_only(out));
  else {
    // Launch tiles of 8 x 2 sites: several per row and column, so tiles meet in every direction.
    ExecOptions small;
    small.block[0] = 8;
    small.block[1] = 2;
    for_each(ex, small, kernel, in_shared(read_only(u)), write_only(out));
  }
  std::vector<Cell<>> got(n.volume()), u_after(n.volume());
  out.gather_to(got.data());
  u.gather_to(u_after.data());
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const Cell<> want = expected<R>(i, j, nx, ny);
      const std::size_t k = static_cast<std::size_t>(j * nx + i);
      ASSERT_TRUE(got[k].a() == want.a() && got[k].v() == want.v())
          << L::name << " padding " << R << " declared " << static_cast<int>(declared) << " site (" << i << ", " << j
          << ") of " << nx << " x " << ny << ": a " << got[k].a() << " want " << want.a();
      ASSERT_TRUE(u_after[k].a() == us[k].a() && u_after[k].v() == us[k].v()) << L::name << " u changed at " << k;
    }
}

template <int R>
void check_layouts(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions) {
  for (Declared d : {Declared::nothing, Declared::read_only_in, Declared::both, Declared::in_shared_read_only}) {
    check<Contiguous, R>(ex, memory, n, partitions, d);
    check<Strided, R>(ex, memory, n, partitions, d);
    check<Tiled<8>, R>(ex, memory, n, partitions, d);
    check<Tiled<16>, R>(ex, memory, n, partitions, d);
  }
}

TEST_P(ForEachAccess, DeclaredAccessGivesThePlainResult) {
  check_layouts<1>(ex, memory(), Extent<2>{61, 5}, Extent<2>{1, 1});   // partial tiles at both ends
  check_layouts<1>(ex, memory(), Extent<2>{200, 4}, Extent<2>{2, 1});  // tiles meet a partition edge
  check_layouts<1>(ex, memory(), Extent<2>{16, 3}, Extent<2>{1, 3});   // a single tile per row
  check_layouts<2>(ex, memory(), Extent<2>{77, 4}, Extent<2>{1, 2});
  check_layouts<1>(ex, memory(), Extent<2>{20011, 1}, Extent<2>{1, 1});  // one row cut into chunks
}

TEST_P(ForEachAccess, AKernelThatReadsAWriteOnlyTensorStillGetsItsValues) {
  // write_only is a promise that only speed depends on: broken, the kernel still reads the
  // tensor's values (its neighbours included) and its writes are kept.
  const Extent<2> n{70, 3};
  auto run = [&]<typename L>(L) {
    TensorOptions<2> o;
    o.padding = Index<2>{1, 1};
    Tensor<Cell<>, 2, L> t(memory(), n, TensorOptions<2>(o).named("t"));
    Tensor<Cell<>, 2, L> out(memory(), n, TensorOptions<2>(o).named("out"));
    std::vector<Cell<>> v(n.volume());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = Cell<>(static_cast<float>(k % 53), {0.0f, 0.0f});
    t.fill_from(v.data());
    for_each(
        ex,
        [] TESSERA_HOST_DEVICE(auto c, auto d) {
          const auto i = c.local_idx(0);
          const bool inside = i + 1 < static_cast<std::int64_t>(c.local_size(0));
          (*d).a() = inside ? (*c.offset(0, 1)).a() : -1.0f;
          (*c).v()[0] = 2.0f * (*c).a();
        },
        write_only(t), write_only(out));
    std::vector<Cell<>> got(n.volume()), t_after(n.volume());
    out.gather_to(got.data());
    t.gather_to(t_after.data());
    for (std::size_t k = 0; k < got.size(); ++k) {
      const bool inside = k % 70 + 1 < 70;
      ASSERT_EQ(got[k].a(), inside ? v[k + 1].a() : -1.0f) << L::name << " site " << k;
      ASSERT_EQ(t_after[k].v()[0], 2.0f * v[k].a()) << L::name << " site " << k;
    }
  };
  run(Tiled<8>{});
  run(Tiled<16>{});
  run(Strided{});
}

TEST_P(ForEachAccess, ArithmeticTensors) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  o.with_padding(1);
  Tensor<double, 1> x(memory(), Extent<1>{100}, o.named("x"));
  Tensor<double, 1> y(memory(), Extent<1>{100}, o.named("y"));
  std::vector<double> xs(100);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i * i);
  x.fill_from(xs.data());
  x.exchange_padding();
  x.load_boundary(ConstantBoundary<double>{0.0});
  for_each(ex, [] TESSERA_HOST_DEVICE(auto a, auto b, double s) { *b = s * (*a.offset(0, 1) - *a.offset(0, -1)); },
           read_only(x), write_only(y), 0.5);
  std::vector<double> got(100);
  y.gather_to(got.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double right = i + 1 < 100 ? xs[i + 1] : 0.0, left = i > 0 ? xs[i - 1] : 0.0;
    ASSERT_EQ(got[i], 0.5 * (right - left)) << "site " << i;
  }
}

TEST_P(ForEachAccess, ReadingLeavesTheOtherCopiesValid) {
  // On devices a read_only block is prepared for reading: the host's copy, valid before the
  // kernel, is still valid after it, so reading it back copies nothing. A tensor the kernel
  // reads and writes is the control: its host copy is out of date after the kernel.
  if (memory().num_spaces() == 1) GTEST_SKIP() << "needs a device (the host's is the only copy)";
  auto run = [&](bool staged) {
    TensorOptions<1> o;
    o.partitions = Extent<1>{2};
    o.with_padding(1);
    Tensor<float, 1> x(memory(), Extent<1>{64}, TensorOptions<1>(o).named("x"));
    Tensor<float, 1> z(memory(), Extent<1>{64}, TensorOptions<1>(o).named("z"));
    std::vector<float> xs(64, 3.0f), zs(64, 1.0f), got(64);
    x.fill_from(xs.data());
    z.fill_from(zs.data());
    x.gather_to(got.data());
    z.gather_to(got.data());
    auto kernel = [] TESSERA_HOST_DEVICE(auto a, auto b) { *b += 2.0f * *a; };
    if (staged)
      for_each(ex, kernel, in_shared(read_only(x)), z);
    else
      for_each(ex, kernel, read_only(x), z);
    for (std::size_t b = 0; b < x.num_blocks(); ++b) {
      EXPECT_EQ(x.buffer(b).valid_rows(0), RowRanges(RowRange{0, x.buffer(b).rows()}))
          << "block " << b << (staged ? " (in_shared)" : "");
      EXPECT_EQ(z.buffer(b).valid_rows(0), RowRanges()) << "block " << b << ": z was written on the device";
    }
    z.gather_to(got.data());
    for (float g : got) ASSERT_EQ(g, 7.0f);
  };
  run(false);
  run(true);
}

TEST_P(ForEachAccess, GraphsTakeDeclaredAccess) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{4};
  Tensor<float, 1> x(memory(), Extent<1>{256}, o.named("x"));
  Tensor<float, 1> y(memory(), Extent<1>{256}, o.named("y"));
  std::vector<float> xs(256);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 17);
  x.fill_from(xs.data());
  Graph g("access");
  g.split([] TESSERA_HOST_DEVICE(auto a, auto b) { *b = *a + 1.0f; }, read_only(x), write_only(y));
  g.then_split([] TESSERA_HOST_DEVICE(auto b, auto a) { *a = 3.0f * *b; }, in_shared(read_only(y)), x);
  g.run(ex).get();
  std::vector<float> got(256), x_after(256);
  y.gather_to(got.data());
  x.gather_to(x_after.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], xs[i] + 1.0f) << "site " << i;
    ASSERT_EQ(x_after[i], 3.0f * (xs[i] + 1.0f)) << "site " << i;
  }
}

TEST_P(ForEachAccess, ATensorDeclaredAndPassedAgainIsAnError) {
  Tensor<float, 1> x(memory(), Extent<1>{32}, TensorOptions<1>().named("x"));
  try {
    for_each(ex, [] TESSERA_HOST_DEVICE(auto a, auto b) { *b = *a; }, read_only(x), x);
    FAIL() << "no tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'x' is passed twice"), std::string::npos) << e.what();
  }
}

TEST_P(ForEachAccess, DocsExample) {
  const Extent<2> n{64, 4};
  TensorOptions<2> o;
  o.with_padding(1);
  Tensor<Cell<>, 2, Tiled<16>> u(memory(), n, TensorOptions<2>(o).named("u"));
  Tensor<Cell<>, 2, Tiled<16>> out(memory(), n, TensorOptions<2>(o).named("out"));
  std::vector<Cell<>> us(n.volume());
  for (std::size_t k = 0; k < us.size(); ++k) us[k] = Cell<>(static_cast<float>(k % 29), {0.0f, 0.0f});
  u.fill_from(us.data());
  u.load_boundary(Periodic{});
  // DOC kernels-access begin
  // u is only read, out only written at each site: declared, the CPU loop stages u's Tiled
  // tiles a tile ahead and never copies them back, and writes out in place. Writing through
  // c would not compile: a read_only argument's views have const members.
  tessera::for_each(
      ex,
      [](auto c, auto d) {
        (*d).a() = 0.25f * ((*c.offset(0, -1)).a() + 2.0f * (*c).a() + (*c.offset(0, 1)).a());
      },
      tessera::read_only(u), tessera::write_only(out));
  // DOC kernels-access end
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::size_t j = 0; j < 4; ++j)
    for (std::size_t i = 0; i < 64; ++i) {
      auto a = [&](std::size_t x) { return us[j * 64 + x % 64].a(); };
      ASSERT_EQ(got[j * 64 + i].a(), 0.25f * (a(i + 63) + 2.0f * a(i) + a(i + 1))) << "site (" << i << ", " << j << ")";
    }
}

TEST_P(ForEachAccess, InSharedReadOnlyDocsExample) {
  const Extent<2> n{40, 6};
  TensorOptions<2> o;
  o.with_padding(1);
  o.partitions = Extent<2>{1, 2};
  Tensor<float, 2> u(memory(), n, TensorOptions<2>(o).named("u"));
  Tensor<float, 2> lap(memory(), n, TensorOptions<2>(o).named("lap"));
  std::vector<float> us(n.volume());
  for (std::size_t k = 0; k < us.size(); ++k) us[k] = static_cast<float>((k * k) % 37);
  u.fill_from(us.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  // DOC kernels-in-shared-read-only begin
  // A five-point Laplacian with u staged, padding included, for each launch tile (8 x 2 sites
  // here); u is only read, so its stages are not written back.
  tessera::ExecOptions tiles;
  tiles.block[0] = 8;
  tiles.block[1] = 2;
  tessera::for_each(
      ex, tiles,
      [](auto c, auto d) {
        *d = *c.offset(0, -1) + *c.offset(0, 1) + *c.offset(1, -1) + *c.offset(1, 1) - 4.0f * *c;
      },
      tessera::in_shared(tessera::read_only(u)), tessera::write_only(lap));
  // DOC kernels-in-shared-read-only end
  std::vector<float> got(n.volume()), u_after(n.volume());
  lap.gather_to(got.data());
  u.gather_to(u_after.data());
  EXPECT_EQ(u_after, us);
  for (std::size_t j = 0; j < 6; ++j)
    for (std::size_t i = 0; i < 40; ++i) {
      auto at = [&](std::size_t x, std::size_t y) { return us[(y % 6) * 40 + x % 40]; };
      // Integers below 2^24 and a weight of 4: exact in float in any order.
      const float want = at(i + 39, j) + at(i + 1, j) + at(i, j + 5) + at(i, j + 1) - 4.0f * at(i, j);
      ASSERT_EQ(got[j * 40 + i], want) << "site (" << i << ", " << j << ")";
    }
}

TENSOR_TEST_ON_DEVICES(ForEachAccess);

}  // namespace
