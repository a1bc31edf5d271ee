// Stencils along x in Tiled<V> layouts: the CPU loop stages each tile of a row with its x
// padding (rows one worker runs whole), or runs the lanes whose neighbours stay in the tile as
// one strip and the lanes at each tile edge across tiles (rows cut into chunks, kernels for one
// iterator type; cpu_block.hpp), so every site must still be computed once, from the right
// neighbours, for every padding (the farthest a kernel reads), row length, partitioning and
// vector length. Checked against a sequential periodic stencil on the host, with Strided as a
// control.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "../tensor/tensor_test_support.hpp"
#include "cell_record.hpp"

using namespace tessera;

namespace {

using exec_test::Cell;

class ForEachTiledStencil : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

// Small integers and power-of-two weights: every sum below is exact in float, so the result does
// not depend on the order in which the lanes run or on the compiler contracting to FMA.
float a_of(std::int64_t i, std::int64_t j) { return static_cast<float>((7 * i + 3 * j) % 64); }
float v0_of(std::int64_t i, std::int64_t j) { return static_cast<float>((5 * i + 11 * j) % 32); }
float v1_of(std::int64_t i, std::int64_t j) { return static_cast<float>((13 * i + j) % 16); }

/// out = out / 2 + sum_k 2^-k (a(x-k) + 2 a(x+k)) + (a(y-1) - a(y+1)) / 4, reading R sites along
/// x with literal offsets (as a user's stencil does), and two vector components from both sides.
template <int R, typename U, typename O>
TESSERA_HOST_DEVICE void stencil(const U& u, const O& out) {
  float s = 0.0f;
  float w = 0.5f;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    ((s += w * ((*u.offset(0, -(K + 1))).a() + 2.0f * (*u.offset(0, K + 1)).a()), w *= 0.5f), ...);
  }(std::make_integer_sequence<int, R>{});
  s += 0.25f * ((*u.offset(1, -1)).a() - (*u.offset(1, 1)).a());
  auto o = *out;
  o.a() = 0.5f * o.a() + s;
  o.v()[0] = (*u.offset(0, R)).v()[1] - (*u.offset(0, -R)).v()[0];
  o.v()[1] = (*u.offset(1, 1)).v()[0] + (*u.offset(0, 1)).v()[1];
}

template <int R>
Cell<> expected(std::int64_t i, std::int64_t j, std::int64_t nx, std::int64_t ny) {
  auto w = [](std::int64_t k, std::int64_t n) { return ((k % n) + n) % n; };
  float s = 0.0f, wk = 0.5f;
  for (int k = 1; k <= R; ++k, wk *= 0.5f) s += wk * (a_of(w(i - k, nx), j) + 2.0f * a_of(w(i + k, nx), j));
  s += 0.25f * (a_of(i, w(j - 1, ny)) - a_of(i, w(j + 1, ny)));
  return Cell<>(0.5f * a_of(j, i) + s, {v1_of(w(i + R, nx), j) - v0_of(w(i - R, nx), j),
                                        v0_of(i, w(j + 1, ny)) + v1_of(w(i + 1, nx), j)});
}

/// stencil<R> as a kernel type that declares how far along x it reads (cpu_block.hpp's
/// kernel_x_reach): a hint for speed only, so a declaration shorter than the reads stays correct.
template <int R, std::size_t Declared>
struct DeclaredStencil {
  static constexpr std::size_t x_reach = Declared;
  template <typename U, typename O>
  TESSERA_HOST_DEVICE void operator()(U c, O d) const {
    stencil<R>(c, d);
  }
};

template <typename L, int R, typename Kernel>
void check_with(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions, std::size_t vvl,
                Kernel kernel) {
  TensorOptions<2> o;
  o.partitions = partitions;
  o.padding = Index<2>{R, 1};
  Tensor<Cell<>, 2, L> u(memory, n, TensorOptions<2>(o).named("u"));
  Tensor<Cell<>, 2, L> out(memory, n, TensorOptions<2>(o).named("out"));
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  std::vector<Cell<>> us(n.volume()), outs(n.volume());
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      us[j * nx + i] = Cell<>(a_of(i, j), {v0_of(i, j), v1_of(i, j)});
      outs[j * nx + i] = Cell<>(a_of(j, i), {-1.0f, -1.0f});
    }
  u.fill_from(us.data());
  out.fill_from(outs.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  ExecOptions eo;
  eo.vvl = vvl;
  for_each(ex, eo, kernel, u, out);
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const Cell<> want = expected<R>(i, j, nx, ny);
      const Cell<>& g = got[j * nx + i];
      ASSERT_TRUE(g.a() == want.a() && g.v() == want.v())
          << L::name << " padding " << R << " site (" << i << ", " << j << ") of " << nx << " x " << ny << ", vvl "
          << vvl << ": a " << g.a() << " want " << want.a() << ", v (" << g.v()[0] << ", " << g.v()[1] << ") want ("
          << want.v()[0] << ", " << want.v()[1] << ")";
    }
}

template <typename L, int R>
void check(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions, std::size_t vvl) {
  check_with<L, R>(ex, memory, n, partitions, vvl, [] TESSERA_HOST_DEVICE(auto c, auto d) { stencil<R>(c, d); });
}

template <int R>
void check_layouts(Executor& ex, MemoryManager& memory, Extent<2> n, Extent<2> partitions) {
  for (std::size_t vvl : {0, 8}) {
    check<Strided, R>(ex, memory, n, partitions, vvl);
    check<Tiled<8>, R>(ex, memory, n, partitions, vvl);
    check<Tiled<16>, R>(ex, memory, n, partitions, vvl);
  }
}

TEST_P(ForEachTiledStencil, ReachOfOneSiteAlongX) {
  check_layouts<1>(ex, memory(), Extent<2>{61, 5}, Extent<2>{1, 1});   // partial tiles at both ends
  check_layouts<1>(ex, memory(), Extent<2>{200, 4}, Extent<2>{2, 1});  // tiles meet a partition edge
  check_layouts<1>(ex, memory(), Extent<2>{16, 3}, Extent<2>{1, 3});   // rows shorter than two tiles
}

TEST_P(ForEachTiledStencil, ReachOfTwoSitesAlongX) {
  check_layouts<2>(ex, memory(), Extent<2>{77, 4}, Extent<2>{1, 2});
  check_layouts<2>(ex, memory(), Extent<2>{130, 3}, Extent<2>{3, 1});
}

TEST_P(ForEachTiledStencil, AKernelDeclaresHowFarAlongXItReads) {
  // Declared exactly, then shorter than its reads (0 and 1 for a reach of 2): the loop then runs
  // whole strips or stages less, and each site must still read the right neighbours.
  for (std::size_t vvl : {0, 8}) {
    check_with<Tiled<8>, 2>(ex, memory(), Extent<2>{77, 4}, Extent<2>{1, 2}, vvl, DeclaredStencil<2, 2>{});
    check_with<Tiled<16>, 2>(ex, memory(), Extent<2>{77, 4}, Extent<2>{1, 2}, vvl, DeclaredStencil<2, 1>{});
    check_with<Tiled<8>, 1>(ex, memory(), Extent<2>{61, 5}, Extent<2>{1, 1}, vvl, DeclaredStencil<1, 0>{});
    check_with<Tiled<16>, 2>(ex, memory(), Extent<2>{130, 3}, Extent<2>{3, 1}, vvl, DeclaredStencil<2, 0>{});
    check_with<Strided, 1>(ex, memory(), Extent<2>{61, 5}, Extent<2>{1, 1}, vvl, DeclaredStencil<1, 0>{});
    // A reach of 0 runs whole tiles and the partial tiles at a row's or a chunk's ends as
    // shorter strips; one long row is cut into chunks per worker.
    check_with<Tiled<8>, 1>(ex, memory(), Extent<2>{20011, 1}, Extent<2>{1, 1}, vvl, DeclaredStencil<1, 0>{});
  }
}

TEST_P(ForEachTiledStencil, WiderReachKeepsWholeStrips) {
  check_layouts<3>(ex, memory(), Extent<2>{90, 3}, Extent<2>{2, 1});
}

TEST_P(ForEachTiledStencil, LongRowsCutIntoChunks) {
  // One long row: the loop cuts it into chunks per worker, which start at tile boundaries.
  check_layouts<1>(ex, memory(), Extent<2>{20011, 1}, Extent<2>{1, 1});
}

TEST_P(ForEachTiledStencil, ReadsBeyondThePaddingStayCorrect) {
  // The loop takes the x padding as how far a kernel reads; a kernel that reads farther where it
  // knows the sites exist (here 2 and 3 sites, with padding 1) must still get the right values.
  const Extent<2> n{100, 3};
  auto run = [&]<typename L>(L) {
    TensorOptions<2> o;
    o.padding = Index<2>{1, 1};
    Tensor<Cell<>, 2, L> u(memory(), n, TensorOptions<2>(o).named("u"));
    Tensor<Cell<>, 2, L> out(memory(), n, TensorOptions<2>(o).named("out"));
    std::vector<Cell<>> us(n.volume());
    for (std::size_t k = 0; k < us.size(); ++k) us[k] = Cell<>(static_cast<float>(k % 61), {0.0f, 0.0f});
    u.fill_from(us.data());
    for_each(
        ex,
        [] TESSERA_HOST_DEVICE(auto c, auto d) {
          const auto i = c.local_idx(0);
          const bool far = i >= 3 && i + 3 < static_cast<std::int64_t>(c.local_size(0));
          (*d).a() = far ? (*c.offset(0, 2)).a() - 2.0f * (*c.offset(0, -3)).a() : -1.0f;
        },
        u, out);
    std::vector<Cell<>> got(n.volume());
    out.gather_to(got.data());
    const auto nx = static_cast<std::size_t>(n.sizes[0]);
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::size_t i = k % nx;
      const float want = i >= 3 && i + 3 < nx ? us[k + 2].a() - 2.0f * us[k - 3].a() : -1.0f;
      ASSERT_EQ(got[k].a(), want) << L::name << " site " << k;
    }
  };
  run(Tiled<8>{});
  run(Tiled<16>{});
  run(Strided{});
}

// Rows that one worker runs whole are staged a tile at a time (staged_tile.hpp): the kernel's
// reads and writes of a tile's sites and R more either side go to a copy, written back after
// the tile. The tests below hold that copy to what the kernel would see and leave without it.

template <typename L>
using CellTensor = Tensor<Cell<>, 2, L>;

/// Values of u for `run_on` below: site (i, j) holds a_of(i, j).
template <typename L>
CellTensor<L> filled(MemoryManager& memory, Extent<2> n, std::int64_t pad, const char* name) {
  TensorOptions<2> o;
  o.padding = Index<2>{pad, 1};
  CellTensor<L> t(memory, n, TensorOptions<2>(o).named(name));
  std::vector<Cell<>> v(n.volume());
  for (std::size_t j = 0; j < n.sizes[1]; ++j)
    for (std::size_t i = 0; i < n.sizes[0]; ++i)
      v[j * n.sizes[0] + i] = Cell<>(a_of(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)), {0.0f, 0.0f});
  t.fill_from(v.data());
  return t;
}

TEST_P(ForEachTiledStencil, WritesToAnXNeighbourAreKept) {
  // Each site writes the next site's `a` of another tensor: at a tile's last lane that site is
  // in the next tile, held by this tile's stage and written back before the next tile is staged.
  const Extent<2> n{70, 4};
  auto run = [&]<typename L>(L) {
    auto u = filled<L>(memory(), n, 1, "u");
    auto out = filled<L>(memory(), n, 1, "out");
    for_each(ex, [] TESSERA_HOST_DEVICE(auto c, auto d) { (*d.offset(0, 1)).a() = 3.0f * (*c).a(); }, u, out);
    std::vector<Cell<>> got(n.volume());
    out.gather_to(got.data());
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t i = 0; i < 70; ++i) {
        const float want = i == 0 ? a_of(i, j) : 3.0f * a_of(i - 1, j);
        ASSERT_EQ(got[static_cast<std::size_t>(j * 70 + i)].a(), want) << L::name << " site (" << i << ", " << j << ")";
      }
  };
  run(Tiled<8>{});
  run(Tiled<16>{});
  run(Strided{});
}

TEST_P(ForEachTiledStencil, WritesFarAlongXAreKept) {
  // Each site writes `v[1]` of a site `far` sites on, beyond the stage's reach, and its own `a`:
  // the far site is in tensor memory for this tile and in the next tile's stage. A next stage
  // loaded before this tile ran (as read_only stages are) would hold the old value and write it
  // back over the write, since the next tile's kernel changes that piece's `a`.
  const Extent<2> n{75, 3};
  auto run = [&]<typename L>(L, std::int64_t far) {
    auto u = filled<L>(memory(), n, 1, "u");
    auto out = filled<L>(memory(), n, 1, "out");
    for_each(
        ex,
        [far] TESSERA_HOST_DEVICE(auto c, auto d) {
          (*d).a() = (*c).a() + 1.0f;
          if (d.global_idx(0) + far < static_cast<std::int64_t>(d.global_size(0)))
            (*d.offset(0, far)).v()[1] = 3.0f * (*c).a();
        },
        u, out);
    std::vector<Cell<>> got(n.volume());
    out.gather_to(got.data());
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 75; ++i) {
        const Cell<>& g = got[static_cast<std::size_t>(j * 75 + i)];
        ASSERT_EQ(g.a(), a_of(i, j) + 1.0f) << L::name << " far " << far << " site (" << i << ", " << j << ")";
        ASSERT_EQ(g.v()[1], i < far ? 0.0f : 3.0f * a_of(i - far, j))
            << L::name << " far " << far << " site (" << i << ", " << j << ")";
      }
  };
  for (std::int64_t far : {3, 6, 11, 19}) {
    run(Tiled<8>{}, far);
    run(Tiled<16>{}, far);
    run(Strided{}, far);
  }
}

TEST_P(ForEachTiledStencil, EveryPathToASiteReachesTheSameCopy) {
  // A site reached by moving along y and back is the site itself: the kernel writes it that way
  // and reads it back along x, so a write to tensor memory under a stage would be overwritten
  // by the stage's old value, and a read of the stage would miss the write.
  const Extent<2> n{40, 3};
  auto run = [&]<typename L>(L) {
    auto u = filled<L>(memory(), n, 1, "u");
    auto out = filled<L>(memory(), n, 1, "out");
    for_each(
        ex,
        [] TESSERA_HOST_DEVICE(auto c, auto d) {
          (*d.offset(1, 1).offset(1, -1)).a() = (*c.offset(1, -1).offset(1, 1)).a() + 1.0f;
          (*d).v()[0] = (*d.offset(0, 1).offset(0, -1)).a() * 2.0f;
        },
        u, out);
    std::vector<Cell<>> got(n.volume());
    out.gather_to(got.data());
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 40; ++i) {
        const Cell<>& g = got[static_cast<std::size_t>(j * 40 + i)];
        ASSERT_EQ(g.a(), a_of(i, j) + 1.0f) << L::name << " site (" << i << ", " << j << ")";
        ASSERT_EQ(g.v()[0], 2.0f * (a_of(i, j) + 1.0f)) << L::name << " site (" << i << ", " << j << ")";
      }
  };
  run(Tiled<8>{});
  run(Tiled<16>{});
}

TEST_P(ForEachTiledStencil, ATensorPassedTwiceIsAnError) {
  // Two stages of one tensor would each write back, the reading argument's unchanged copy over
  // the writing argument's result: for_each refuses the launch, and the tensor is unchanged.
  const Extent<2> n{50, 3};
  auto u = filled<Tiled<16>>(memory(), n, 1, "u");
  auto twice = [&] { for_each(ex, [] TESSERA_HOST_DEVICE(auto w, auto r) { (*w).a() = 2.0f * (*r).a(); }, u, u); };
  EXPECT_THROW(twice(), Error);
  std::vector<Cell<>> got(n.volume());
  u.gather_to(got.data());
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 50; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(j * 50 + i)].a(), a_of(i, j)) << "site (" << i << ", " << j << ")";
}

TEST_P(ForEachTiledStencil, StagedIteratorsKnowWhereTheyAre) {
  // Global and local indices, sizes and validity come from the tensor, not the stage.
  TensorOptions<2> o;
  o.padding = Index<2>{2, 1};
  o.partitions = Extent<2>{2, 1};
  const Extent<2> n{45, 3};
  Tensor<Cell<>, 2, Tiled<16>> u(memory(), n, TensorOptions<2>(o).named("u"));
  Tensor<Cell<>, 2, Tiled<16>> out(memory(), n, TensorOptions<2>(o).named("out"));
  for_each(
      ex,
      [] TESSERA_HOST_DEVICE(auto c, auto d) {
        auto r = *d;
        r.a() = static_cast<float>(c.global_idx(0) + 100 * c.global_idx(1));
        r.v()[0] = static_cast<float>(c.local_idx(0) + 100 * static_cast<std::int64_t>(c.local_size(0)));
        r.v()[1] = c.is_valid() && !c.offset(0, static_cast<std::ptrdiff_t>(c.local_size(0))).is_valid() &&
                           c.padding(0) == 2 && c.global_size(0) == 45
                       ? 1.0f
                       : 0.0f;
      },
      u, out);
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 45; ++i) {
      const Cell<>& g = got[static_cast<std::size_t>(j * 45 + i)];
      const std::int64_t local = i < 23 ? i : i - 23, size = i < 23 ? 23 : 22;
      ASSERT_EQ(g.a(), static_cast<float>(i + 100 * j)) << "site (" << i << ", " << j << ")";
      ASSERT_EQ(g.v()[0], static_cast<float>(local + 100 * size)) << "site (" << i << ", " << j << ")";
      ASSERT_EQ(g.v()[1], 1.0f) << "site (" << i << ", " << j << ")";
    }
}

TEST_P(ForEachTiledStencil, DocsExample) {
  const Extent<2> n{64, 8};
  auto u = filled<Tiled<16>>(memory(), n, 1, "u");
  auto out = filled<Tiled<16>>(memory(), n, 1, "out");
  u.load_boundary(Periodic{});
  // DOC kernels-tiled-stencil begin
  // A three-point average along x over Tiled<16> tensors with one site of padding. The CPU loop
  // stages each tile with one site either side, so the kernel gets iterators of its own type:
  // write kernels generic in their iterators (auto), as here.
  tessera::for_each(
      ex,
      [](auto c, auto d) {
        (*d).a() = 0.25f * ((*c.offset(0, -1)).a() + 2.0f * (*c).a() + (*c.offset(0, 1)).a());
      },
      u, out);
  // DOC kernels-tiled-stencil end
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::int64_t j = 0; j < 8; ++j)
    for (std::int64_t i = 0; i < 64; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(j * 64 + i)].a(),
                0.25f * (a_of((i + 63) % 64, j) + 2.0f * a_of(i, j) + a_of((i + 1) % 64, j)))
          << "site (" << i << ", " << j << ")";
}

/// A kernel written for one iterator type: the loop cannot hand it staged iterators.
struct TypedStencil {
  using It = IndexedIterator<Cell<>, 2, Tiled<8>>;
  void operator()(It c, It d) const { (*d).a() = (*c.offset(0, -1)).a() + (*c.offset(0, 1)).a(); }
};

TEST_P(ForEachTiledStencil, AKernelForOneIteratorTypeStillRuns) {
  const Extent<2> n{30, 3};
  auto u = filled<Tiled<8>>(memory(), n, 1, "u");
  auto out = filled<Tiled<8>>(memory(), n, 1, "out");
  u.load_boundary(Periodic{});
  for_each(ex, TypedStencil{}, u, out);
  std::vector<Cell<>> got(n.volume());
  out.gather_to(got.data());
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 30; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(j * 30 + i)].a(), a_of((i + 29) % 30, j) + a_of((i + 1) % 30, j))
          << "site (" << i << ", " << j << ")";
}

TENSOR_TEST_ON_DEVICES(ForEachTiledStencil);

}  // namespace
