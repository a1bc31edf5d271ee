// Tensors spread over ranks, under mpirun -np 2..4: the rank decomposition, halo exchange against
// the sites' known values and a single-process tensor for every layout and padding, graphs with
// padded access and reductions bitwise equal to one process, gathers, checkpoints that restart
// on another decomposition, and the errors of mismatched declarations.
#include "mpi_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/io/hdf5.hpp>
#include <tessera/io/png.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// A value no two sites share: a halo site taken from the wrong place shows.
template <std::size_t D>
double site_value(const tessera::Index<D>& i) {
  double v = 0, scale = 1;
  for (std::size_t d = 0; d < D; ++d, scale *= 1000) v += static_cast<double>(i.coords[d] + 7) * scale;
  return v;
}

template <std::size_t D>
std::vector<double> dense_values(const tessera::Extent<D>& sizes) {
  std::vector<double> dense(sizes.volume());
  tessera::for_each_index(tessera::Box<D>(sizes),
                          [&](const tessera::Index<D>& i) { dense[sizes.linear(i)] = site_value(i); });
  return dense;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DistTensor, DecompositionCutsTheFewestHaloSites) {
  const std::size_t square[2] = {64, 64}, wide[2] = {256, 16}, zeros[2] = {0, 0}, ones[2] = {1, 1};
  EXPECT_EQ(tessera::make_rank_decomposition("t", 2, square, zeros, 4, ones).grid, (std::vector<std::size_t>{2, 2}));
  // A tie between {2, 1} and {1, 2} cuts the slower dimension: halos are whole rows.
  EXPECT_EQ(tessera::make_rank_decomposition("t", 2, square, zeros, 2, ones).grid, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(tessera::make_rank_decomposition("t", 2, wide, zeros, 4, ones).grid, (std::vector<std::size_t>{4, 1}));
  const std::size_t cube[3] = {30, 30, 30}, zeros3[3] = {0, 0, 0}, ones3[3] = {1, 1, 1};
  EXPECT_EQ(tessera::make_rank_decomposition("t", 3, cube, zeros3, 8, ones3).grid, (std::vector<std::size_t>{2, 2, 2}));
  const auto r = tessera::make_rank_decomposition("t", 2, wide, zeros, 3, ones);
  EXPECT_EQ(r.cuts[0], (std::vector<std::int64_t>{0, 86, 171, 256}));  // 256 = 86 + 85 + 85
  const std::size_t bad[2] = {3, 2};
  EXPECT_NE(error_of([&] {
              tessera::make_rank_decomposition("u", 2, square, bad, 4, ones);
            }).find("tensor 'u': rank_grid {3, 2} has 6 ranks, but the run has 4"),
            std::string::npos);
  const std::size_t partly[2] = {2, 0};
  EXPECT_NE(error_of([&] { tessera::make_rank_decomposition("u", 2, square, partly, 4, ones); }).find("partly given"),
            std::string::npos);
  const std::size_t tiny[2] = {2, 2}, many[2] = {2, 2};
  EXPECT_NE(error_of([&] { tessera::make_rank_decomposition("u", 2, tiny, zeros, 4, many); }).find("cannot cut {2, 2}"),
            std::string::npos);
}

// Every padded site of every block this rank holds, after exchange_padding and a boundary, holds
// what a single-process tensor with the same blocks' cut holds there: the site's own value
// inside the domain, the loader's outside.
template <typename L, std::size_t D>
void check_exchange(const tessera::Extent<D>& sizes, const tessera::Index<D>& padding, const tessera::Extent<D>& sub,
                    const char* devices, std::array<bool, D> periodic = {}) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select(devices);
  tessera::MemoryManager memory(set);
  tessera::TensorOptions<D> o;
  o.padding = padding;
  o.sub_partitions = sub;
  o.periodic = periodic;
  o.named("field");
  const std::vector<double> dense = dense_values(sizes);
  tessera::Tensor<double, D, L> single(memory, sizes, o);
  single.fill_from(dense.data());
  single.exchange_padding();
  // A periodic tensor's padding is all halo; the others get a loader's values at the edges.
  bool any_periodic = false;
  for (bool p : periodic) any_periodic |= p;
  if (!any_periodic) single.load_boundary(tessera::ZeroGradient{});
  o.over(comm);
  tessera::Tensor<double, D, L> spread(memory, sizes, o);
  EXPECT_EQ(spread.size(), sizes);
  spread.fill_from(dense.data());
  spread.exchange_padding();
  if (!any_periodic) spread.load_boundary(tessera::ZeroGradient{});
  const tessera::Box<D> domain(sizes);
  auto ref = single.host(tessera::Access::read);
  auto mine = spread.host(tessera::Access::read);
  std::size_t checked = 0;
  for (std::size_t b = 0; b < spread.num_blocks(); ++b) {
    const auto& g = spread.geometry(b);
    EXPECT_TRUE(spread.local_box().intersect(g.interior) == g.interior);
    tessera::for_each_index(g.interior.grown(padding), [&](const tessera::Index<D>& i) {
      const double got = mine.block(b).at(i - g.interior.lo);
      tessera::Index<D> wrapped = i;  // where a periodic dimension's padding comes from
      for (std::size_t d = 0; d < D; ++d) {
        const auto n = static_cast<std::int64_t>(sizes.sizes[d]);
        if (periodic[d]) wrapped.coords[d] = (i.coords[d] % n + n) % n;
      }
      if (domain.contains(wrapped)) {
        ASSERT_EQ(got, site_value(wrapped)) << "block " << b << " site " << i << " on rank " << comm.rank();
        // One process wraps the same way (its edge block's padding holds the site too).
        if (!domain.contains(i)) {
          ASSERT_EQ(static_cast<double>(ref.at(i)), site_value(wrapped)) << "site " << i;
        }
      } else {
        // The outer padding: the loader's value, as one process loads it (corners beside
        // another rank's part come from the halo that arrived first).
        bool corner_of_two_faces = false;
        for (std::size_t d = 0; d < D; ++d)
          for (std::size_t e = d + 1; e < D; ++e)
            corner_of_two_faces |= !(i.coords[d] >= 0 && i.coords[d] < static_cast<std::int64_t>(sizes.sizes[d])) &&
                                   !(i.coords[e] >= 0 && i.coords[e] < static_cast<std::int64_t>(sizes.sizes[e]));
        if (!corner_of_two_faces) {
          ASSERT_EQ(got, static_cast<double>(ref.at(i))) << "outer site " << i;
        }
      }
      ++checked;
    });
  }
  EXPECT_GT(checked, 0u);
}

TEST(DistTensor, HaloExchangeMatchesOneProcess2D) {
  check_exchange<tessera::Contiguous, 2>({37, 29}, {1, 1}, {1, 1}, "host");
  check_exchange<tessera::Strided, 2>({37, 29}, {2, 1}, {2, 2}, "host");
  check_exchange<tessera::Tiled<8>, 2>({40, 33}, {1, 2}, {1, 2}, "host");
  check_exchange<tessera::Contiguous, 2>({24, 24}, {3, 3}, {1, 1}, "host");
}

TEST(DistTensor, HaloExchangeMatchesOneProcess3D) {
  check_exchange<tessera::Contiguous, 3>({17, 13, 19}, {1, 1, 1}, {1, 1, 1}, "host");
  check_exchange<tessera::Strided, 3>({16, 12, 20}, {2, 1, 1}, {1, 2, 1}, "host");
}

TEST(DistTensor, PeriodicHalosWrapAcrossRanks) {
  check_exchange<tessera::Contiguous, 2>({37, 29}, {1, 1}, {1, 1}, "host", {true, true});
  check_exchange<tessera::Strided, 2>({30, 31}, {2, 2}, {2, 1}, "host", {false, true});
  check_exchange<tessera::Contiguous, 3>({14, 12, 13}, {1, 1, 1}, {1, 1, 2}, "host", {true, true, true});
  check_exchange<tessera::Strided, 2>({33, 41}, {1, 1}, {1, 2}, "sim:2:64MiB", {true, true});
}

TEST(DistTensor, HaloExchangeThroughSimDevices) {
  check_exchange<tessera::Strided, 2>({33, 41}, {1, 1}, {1, 2}, "sim:2:64MiB");
  check_exchange<tessera::Contiguous, 3>({12, 12, 14}, {1, 1, 1}, {1, 1, 1}, "sim:2:64MiB");
}

TEST(DistTensor, GatherGivesEveryRankTheWholeTensor) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  const tessera::Extent<2> sizes{31, 17};
  tessera::TensorOptions<2> o;
  o.over(comm);
  o.rank_grid = {static_cast<std::size_t>(comm.size()), 1};
  tessera::Tensor<double, 2> t(memory, sizes, o);
  const std::vector<double> dense = dense_values(sizes);
  t.fill_from(dense.data());
  std::vector<double> back(sizes.volume(), -1.0);
  t.gather_to(back.data());
  EXPECT_EQ(back, dense);
  // A site of this rank's part is reachable; one of another rank's is an error saying so.
  EXPECT_EQ(t.get(t.local_box().lo), site_value(t.local_box().lo));
  if (comm.size() > 1) {
    const tessera::Index<2> away{comm.rank() == 0 ? 30 : 0, 0};
    EXPECT_NE(error_of([&] { (void)t.get(away); }).find("is held by another rank"), std::string::npos);
  }
  EXPECT_NE(error_of([&] { t.resize({10, 10}); }).find("resize of a tensor distributed over ranks"), std::string::npos);
}

namespace {
// Four-point average plus the centre: reads the padding along both dimensions.
struct Smooth {
  template <typename In, typename Out>
  void operator()(In in, Out out) const {
    *out = 0.2 * (*in + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1));
  }
};
struct Edges {
  template <typename It>
  void operator()(It it) const {
    for (std::size_t d = 0; d < 2; ++d) {
      if (it.global_idx(d) == 0) *it.offset(d, -1) = 1.0;
      if (it.global_idx(d) == static_cast<std::int64_t>(it.global_size(d)) - 1) *it.offset(d, 1) = -1.0;
    }
  }
};

// Steps of a diffusion graph (boundary, smooth a -> b, boundary, smooth b -> a, max |a|, sum of
// a's integer part) on the given tensor options; returns the gathered field and the reductions.
struct RunResult {
  std::vector<double> field;
  std::vector<double> maxima, sums;
};

RunResult run_graph(const tessera::TensorOptions<2>& options, const char* devices, std::size_t steps,
                    tessera::StencilShape stencil = tessera::StencilShape::box()) {
  tessera::DeviceSet set = tessera::DeviceSet::select(devices);
  tessera::MemoryManager memory(set);
  tessera::Executor executor;
  const tessera::Extent<2> sizes{45, 38};
  tessera::TensorOptions<2> o = options;
  o.with_padding(1);
  tessera::Tensor<double, 2, tessera::Strided> a(memory, sizes, o.named("a")), b(memory, sizes, o.named("b"));
  std::vector<double> dense(sizes.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<double>((k * 7919) % 101) - 50.0;
  a.fill_from(dense.data());
  tessera::ReductionResult<double> largest, total;
  RunResult run;
  tessera::Graph g("diffusion");
  g.split(Edges{}, a)
      .then_split(Smooth{}, tessera::concurrent_padded_access(a, stencil), b)
      .then_split(Edges{}, b)
      .then_split(Smooth{}, tessera::concurrent_padded_access(b, stencil), a)
      .then_reduce(a, largest, tessera::Max{}, [](auto it) { return *it < 0 ? -*it : *it; })
      .then_reduce(a, total, tessera::Sum{}, [](auto it) { return static_cast<double>(static_cast<long>(*it * 64)); })
      .then([&] {
        run.maxima.push_back(largest.value());
        run.sums.push_back(total.value());
      });
  g.run_n(executor, steps).get();
  run.field.resize(sizes.volume());
  a.gather_to(run.field.data());
  return run;
}

// Every site and every step's reductions the same bits as `single`'s.
void expect_same_run(const RunResult& got, const RunResult& single, const std::string& where) {
  ASSERT_EQ(got.field.size(), single.field.size());
  for (std::size_t k = 0; k < single.field.size(); ++k)
    ASSERT_EQ(got.field[k], single.field[k]) << "site " << k << " " << where << ", rank " << test_comm().rank();
  EXPECT_EQ(got.maxima, single.maxima) << where;
  EXPECT_EQ(got.sums, single.sums) << where;  // integer-valued: exact in any order
}
}  // namespace

TEST(DistTensor, GraphWithPaddedAccessIsBitwiseOneProcess) {
  auto& comm = test_comm();
  const RunResult single = run_graph({}, "host", 12);
  for (const char* devices : {"host", "sim:2:64MiB"}) {
    tessera::TensorOptions<2> spread;
    spread.over(comm);
    spread.sub_partitions = {1, 2};
    expect_same_run(run_graph(spread, devices, 12), single, std::string("on ") + devices);
  }
  // Another grid of ranks, the other way round.
  tessera::TensorOptions<2> columns;
  columns.over(comm);
  columns.rank_grid = {static_cast<std::size_t>(comm.size()), 1};
  EXPECT_EQ(run_graph(columns, "host", 12).field, single.field);
}

// Smooth reads along the axes only: declared a star stencil, its messages carry the faces (no
// corners) and the results keep every bit.
TEST(DistTensor, StarStencilGraphIsBitwiseOneProcess) {
  auto& comm = test_comm();
  const RunResult single = run_graph({}, "host", 12);
  for (const char* devices : {"host", "sim:2:64MiB"}) {
    tessera::TensorOptions<2> spread;
    spread.over(comm);
    const auto ranks = static_cast<std::size_t>(comm.size());
    // Two columns of ranks where the count allows: corners between ranks.
    spread.rank_grid = ranks % 2 == 0 ? tessera::Extent<2>{2, ranks / 2} : tessera::Extent<2>{ranks, 1};
    spread.sub_partitions = {2, 1};
    expect_same_run(run_graph(spread, devices, 12, tessera::StencilShape::star()), single,
                    std::string("star on ") + devices);
  }
}

// A star stencil's messages hold only face sites: fewer than the box's wherever a rank has a
// diagonal neighbour, and every box they list lies beside a block along one dimension.
TEST(DistTensor, StarStencilMessagesHoldOnlyFaces) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  tessera::TensorOptions<3> o;
  o.over(comm).with_padding(1);
  o.periodic = {true, true, true};
  o.sub_partitions = {2, 2, 1};
  o.named("faces");
  tessera::Tensor<float, 3> t(memory, {8, 8, 8}, o);
  std::size_t box_sites = 0, star_sites = 0;
  for (const auto& h : t.halo_sends()) box_sites += h.sites;
  for (const auto& h : t.halo_sends(tessera::StencilShape::star())) {
    star_sites += h.sites;
    for (const auto& [b, box] : h.boxes) {
      // The sender's box is a face of its block: one site deep along one dimension, the whole
      // block along the others (an edge would be short along two).
      const tessera::Extent<3> block = t.geometry(b).interior.extent();
      std::size_t short_dims = 0;
      for (std::size_t d = 0; d < 3; ++d)
        if (box.extent().sizes[d] != block.sizes[d]) {
          ++short_dims;
          EXPECT_EQ(box.extent().sizes[d], 1u) << "block " << b << " dimension " << d;
        }
      EXPECT_EQ(short_dims, 1u) << "block " << b << " on rank " << comm.rank();
    }
  }
  std::size_t star_recv = 0;
  for (const auto& h : t.halo_recvs(tessera::StencilShape::star())) star_recv += h.sites;
  if (comm.size() > 1) {
    EXPECT_GT(star_sites, 0u);
    EXPECT_LT(star_sites, box_sites);
    EXPECT_EQ(star_recv, star_sites);  // periodic and evenly cut: as much in as out
  }
  // exchange_padding with the star stencil fills every face site; run it to check it is collective.
  std::vector<float> dense(t.size().volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<float>(k);
  t.fill_from(dense.data());
  t.exchange_padding(tessera::StencilShape::star());
  auto h = t.host(tessera::Access::read);
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const auto& g = t.geometry(b);
    for (std::size_t d = 0; d < 3; ++d)
      for (int side : {-1, 1}) {
        tessera::Index<3> face = g.interior.lo;  // the face's first site, beside the interior's first
        face.coords[d] = side < 0 ? g.interior.lo.coords[d] - 1 : g.interior.hi.coords[d];
        tessera::Index<3> wrapped = face;
        wrapped.coords[d] = (wrapped.coords[d] + 8) % 8;
        ASSERT_EQ(h.block(b).at(face - g.interior.lo), dense[t.size().linear(wrapped)])
            << "block " << b << " dimension " << d << " side " << side << " rank " << comm.rank();
      }
  }
}

TEST(DistTensor, GraphNamesItsMessageNodes) {
  auto& comm = test_comm();
  if (comm.size() < 2) GTEST_SKIP() << "one rank sends nothing";
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  tessera::TensorOptions<2> o;
  o.over(comm).with_padding(1);
  o.rank_grid = {1, static_cast<std::size_t>(comm.size())};
  tessera::Tensor<double, 2> a(memory, {16, 16}, o.named("a")), b(memory, {16, 16}, o.named("b"));
  tessera::Graph g("named");
  g.split(Smooth{}, tessera::concurrent_padded_access(a), b).named("smooth");
  const int up = comm.rank() + 1 < comm.size() ? comm.rank() + 1 : comm.rank() - 1;
  EXPECT_NE(g.find("smooth pack for rank " + std::to_string(up)), nullptr);
  EXPECT_NE(g.find("smooth send to rank " + std::to_string(up)), nullptr);
  EXPECT_NE(g.find("smooth receive from rank " + std::to_string(up)), nullptr);
  EXPECT_NE(g.find("smooth unpack from rank " + std::to_string(up)), nullptr);
}

// reduce, and reduce_into in for_each and in a graph's splits (the graph's with the same
// all-gather as its reduce nodes), combine every rank's partials: every rank ends with the total.
TEST(DistTensor, ReduceAndReduceIntoCombineEveryRank) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  tessera::Executor executor;
  const tessera::Extent<3> sizes{9, 10, 11};
  tessera::TensorOptions<3> o;
  o.over(comm);
  o.sub_partitions = {1, 2, 1};
  tessera::Tensor<double, 3> t(memory, sizes, o.named("t")), twice(memory, sizes, o.named("twice"));
  const std::vector<double> dense = dense_values(sizes);
  t.fill_from(dense.data());
  const double highest = site_value(tessera::Index<3>{8, 9, 10});
  tessera::ReductionResult<double> largest, count;
  tessera::reduce(executor, t, largest, tessera::Max{});
  tessera::reduce(executor, t, count, tessera::Sum{}, [](auto) { return 1.0; });
  EXPECT_EQ(largest.value(), highest);
  EXPECT_EQ(count.value(), static_cast<double>(sizes.volume()));

  tessera::ReductionResult<double> largest_twice, counted, total;
  tessera::for_each(
      executor, [](auto it, auto out, auto c) { *c = *out = 2.0 * *it; }, tessera::read_only(t),
      tessera::write_only(twice), tessera::reduce_into(largest_twice, tessera::Max{}));
  EXPECT_EQ(largest_twice.value(), 2.0 * highest);
  tessera::Graph g("count");
  g.split([](auto, auto c) { *c = 1.0; }, t, tessera::reduce_into(counted, tessera::Sum{}))
      .then_split([](auto it, auto c) { *c = static_cast<double>(static_cast<long>(*it)); }, twice,
                  tessera::reduce_into(total, tessera::Sum{}));
  g.run_n(executor, 2).get();
  EXPECT_EQ(counted.value(), static_cast<double>(sizes.volume()));
  double want = 0;  // integer-valued: exact in any order
  for (double v : dense) want += static_cast<double>(static_cast<long>(2.0 * v));
  EXPECT_EQ(total.value(), want);
}

TEST(DistTensor, CheckpointRestartsOnAnotherDecomposition) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  const tessera::Extent<2> sizes{23, 35};
  const std::string path = shared_temp_path("tessera_dist_ckpt", ".ckpt");
  const std::vector<double> dense = dense_values(sizes);
  {
    tessera::TensorOptions<2> o;
    o.over(comm);
    o.rank_grid = {1, static_cast<std::size_t>(comm.size())};
    tessera::Tensor<double, 2> t(memory, sizes, o);
    t.fill_from(dense.data());
    tessera::io::CheckpointScalars s;
    s.set("step", std::int64_t{42});
    tessera::io::save_checkpoint(path, t, s);
  }
  // One process (every rank on its own) reads the same file...
  tessera::Tensor<double, 2> whole(memory, sizes);
  EXPECT_EQ(tessera::io::load_checkpoint(path, whole).integer("step"), 42);
  std::vector<double> back(sizes.volume());
  whole.gather_to(back.data());
  EXPECT_EQ(back, dense);
  // ...and so does the run cut the other way.
  tessera::TensorOptions<2> o;
  o.over(comm);
  o.rank_grid = {static_cast<std::size_t>(comm.size()), 1};
  o.sub_partitions = {2, 1};
  tessera::Tensor<double, 2> other(memory, sizes, o);
  tessera::io::load_checkpoint(path, other);
  std::fill(back.begin(), back.end(), 0.0);
  other.gather_to(back.data());
  EXPECT_EQ(back, dense);
  // An unwritable path fails on every rank, not only on the rank that writes.
  EXPECT_NE(error_of([&] { tessera::io::save_checkpoint("/nonexistent-dir/x.ckpt", other); }).find("x.ckpt"),
            std::string::npos);
  comm.barrier();
  if (comm.rank() == 0) std::filesystem::remove(path);
}

TEST(DistTensor, MismatchedDeclarationsFailOnEveryRank) {
  auto& comm = test_comm();
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  tessera::TensorOptions<2> o;
  o.over(comm).named("pressure");
  const tessera::Extent<2> sizes{32, comm.rank() == 1 ? std::size_t{24} : std::size_t{16}};
  const std::string m = error_of([&] { tessera::Tensor<double, 2> t(memory, sizes, o); });
  if (comm.rank() == 1)
    EXPECT_NE(m.find("tensor 'pressure': this rank (1) declared it with sizes {32, 24} against {32, 16} on rank 0"),
              std::string::npos)
        << m;
  else
    EXPECT_NE(m.find("tensor 'pressure': rank 1 declared it differently from rank 0 (sizes {32, 24} against {32, 16})"),
              std::string::npos)
        << m;
  // Bad options every rank shares fail on every rank alike, without anyone left waiting.
  tessera::TensorOptions<2> bad;
  bad.over(comm);
  bad.rank_grid = {3, 7};
  EXPECT_NE(error_of([&] {
              tessera::Tensor<double, 2> t(memory, {32, 32}, bad);
            }).find("rank_grid {3, 7} has 21 ranks"),
            std::string::npos);
  // After all that, the ranks still agree on their channels: a good tensor works.
  tessera::Tensor<double, 2> good(memory, {8, 8}, o);
  std::vector<double> dense = dense_values(tessera::Extent<2>{8, 8}), back(64);
  good.fill_from(dense.data());
  good.gather_to(back.data());
  EXPECT_EQ(back, dense);
}

TEST(DistTensor, PeriodicAcrossRanksIsRefused) {
  auto& comm = test_comm();
  if (comm.size() < 2) GTEST_SKIP() << "one rank wraps locally";
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  tessera::TensorOptions<2> o;
  o.over(comm).with_padding(1);
  o.rank_grid = {1, static_cast<std::size_t>(comm.size())};
  tessera::Tensor<double, 2> t(memory, {16, 16}, o);
  EXPECT_NO_THROW(t.load_boundary(tessera::Periodic{}, tessera::Face{0, tessera::Side::low}));
  EXPECT_NE(error_of([&] { t.load_boundary(tessera::Periodic{}); }).find("a Periodic boundary in dimension 1"),
            std::string::npos);
  // Declared periodic, the halo exchange wraps instead (PeriodicHalosWrapAcrossRanks).
  o.periodic = {true, true};
  tessera::Tensor<double, 2> wraps(memory, {16, 16}, o);
  EXPECT_NO_THROW(wraps.load_boundary(tessera::Periodic{}));
}

namespace {
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace

// A picture of a distributed tensor: rank 0 writes it, every rank gets its range, and it is the
// picture one process writes. A series, one process's file, refuses a distributed tensor.
TEST(DistTensor, OutputsOfADistributedTensor) {
  auto& comm = test_comm();
  tessera::DeviceSet set = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(set);
  const tessera::Extent<2> sizes{40, 30};
  const std::vector<double> dense = dense_values(sizes);
  tessera::TensorOptions<2> o;
  o.over(comm);
  tessera::Tensor<double, 2> spread(memory, sizes, o);
  spread.fill_from(dense.data());
  const std::string mine = shared_temp_path("tessera_dist_png", ".png");
  const std::string alone = shared_temp_path("tessera_dist_png_rank" + std::to_string(comm.rank()), ".png");
  if (tessera::io::png_supported()) {
    const tessera::io::ColorRange r = tessera::io::write_png(mine, spread);
    EXPECT_EQ(r.lo, site_value(tessera::Index<2>{0, 0}));
    EXPECT_EQ(r.hi, site_value(tessera::Index<2>{39, 29}));
    tessera::Tensor<double, 2> whole(memory, sizes);
    whole.fill_from(dense.data());
    tessera::io::write_png(alone, whole);
    EXPECT_EQ(file_bytes(mine), file_bytes(alone));
    std::filesystem::remove(alone);
    // Rank 0 cannot write: every rank hears of it.
    EXPECT_NE(error_of([&] { tessera::io::write_png("/nonexistent-dir/u.png", spread); }).find("u.png"),
              std::string::npos);
    comm.barrier();
    if (comm.rank() == 0) std::filesystem::remove(mine);
  }
  if (tessera::io::hdf5_supported() && comm.size() > 1) {
    const std::string base = shared_temp_path("tessera_dist_h5_rank" + std::to_string(comm.rank()), "");
    {
      tessera::io::Hdf5Series series(base, tessera::io::UniformGrid{{40, 30}, {0.0, 0.0}, {1.0, 1.0}});
      series.begin_step(0, 0.0);
      EXPECT_NE(error_of([&] { series.write("u", spread); }).find("is spread over"), std::string::npos);
    }
    std::filesystem::remove(base + ".h5");
    std::filesystem::remove(base + ".xmf");
  }
}
