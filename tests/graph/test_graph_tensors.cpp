// Graphs over tensors on host, sim:1 and sim:4: split kernels, reductions, padded access with
// halo nodes (concurrent and exclusive), conditional passes and run-time arguments, each
// checked against a sequential computation on the host.

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

namespace {

using namespace tessera;
using tensor_test::OnDevices;

class GraphTensors : public OnDevices {
 protected:
  std::size_t parts() const { return accelerators() > 0 ? accelerators() : 4; }
  Executor ex;
};

// Ripple Listings 7 and 8: SAXPY split over the partitions, then a sum.
TEST_P(GraphTensors, SplitSaxpyThenReduce) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  Tensor<double, 1> x(memory(), Extent<1>{1000}, o.named("x"));
  Tensor<double, 1> y(memory(), Extent<1>{1000}, o.named("y"));
  std::vector<double> xs(1000), ys(1000);
  for (std::size_t i = 0; i < 1000; ++i) {
    xs[i] = static_cast<double>(i);
    ys[i] = 1.0;
  }
  x.fill_from(xs.data());
  y.fill_from(ys.data());
  ReductionResult<double> sum;
  Graph g("saxpy");
  g.split([] TESSERA_HOST_DEVICE(auto xi, auto yi, double a) { *yi = a * *xi + *yi; }, x, y, 4.0)
      .then_reduce(y, sum, Sum{});
  g.run(ex).get();
  ASSERT_TRUE(sum.is_complete());
  // 4 * (0 + ... + 999) + 1000, exact in double.
  EXPECT_EQ(sum.value(), 4.0 * 999.0 * 1000.0 / 2.0 + 1000.0);
  g.run_n(ex, 2).get();
  EXPECT_EQ(sum.value(), 3 * 4.0 * 999.0 * 1000.0 / 2.0 + 1000.0);
}

// out = sum of the four neighbours, across partition edges through halo nodes; the outer
// padding stays zero. Twice, with u changed between the runs: halos are copied every run. The
// kernel reads along the axes only, so a star stencil (faces, no corners) gives the same.
TEST_P(GraphTensors, ConcurrentPaddedAccessReadsNeighbourBlocks) {
  const std::size_t nx = 24, ny = 20;
  for (const StencilShape stencil : {StencilShape::box(), StencilShape::star()})
    for (const Extent<2> partitions : {Extent<2>{1, 1}, Extent<2>{2, 1}, Extent<2>{2, 2}, Extent<2>{1, 4}}) {
      TensorOptions<2> o;
      o.partitions = partitions;
      o.with_padding(1);
      Tensor<double, 2> u(memory(), Extent<2>{nx, ny}, o.named("u"));
      TensorOptions<2> po = o;
      po.padding = Index<2>{};
      Tensor<double, 2> out(memory(), Extent<2>{nx, ny}, po.named("out"));
      Graph g("stencil");
      g.split(
          [] TESSERA_HOST_DEVICE(auto in, auto res) {
            *res = *in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1);
          },
          concurrent_padded_access(u, stencil), out);
      for (int run = 0; run < 2; ++run) {
        std::vector<double> dense(nx * ny);
        for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<double>(k * (run + 1) % 97);
        u.fill_from(dense.data());
        g.run(ex).get();
        std::vector<double> got(nx * ny);
        out.gather_to(got.data());
        auto at = [&](std::int64_t i, std::int64_t j) {
          if (i < 0 || j < 0 || i >= static_cast<std::int64_t>(nx) || j >= static_cast<std::int64_t>(ny)) return 0.0;
          return dense[static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(i)];
        };
        for (std::size_t j = 0; j < ny; ++j)
          for (std::size_t i = 0; i < nx; ++i) {
            const auto si = static_cast<std::int64_t>(i), sj = static_cast<std::int64_t>(j);
            ASSERT_EQ(got[j * nx + i], at(si + 1, sj) + at(si - 1, sj) + at(si, sj + 1) + at(si, sj - 1))
                << "site " << i << "," << j << " partitions " << partitions.sizes[0] << "x" << partitions.sizes[1]
                << " run " << run << (stencil.reads_diagonals() ? " box" : " star");
          }
      }
    }
}

// Graph::capture: a Jacobi-like sweep with halos (or a pointwise one without), a copy back and a
// sum, run 8 times captured (run 1 plain, run 2 records, 3-8 replay) and 8 times plain, must give
// the same bits, with the reduction's host final still running every time. Blocks cut along y
// exchange whole rows on the devices, and their recordings replay; blocks cut along x stage
// their halos through the host, which has the memory layer copy rows in each run, so such a
// recording is not replayed (the graph says why and runs as if not captured). On the host
// there is nothing to capture.
TEST_P(GraphTensors, CapturedRunsGiveTheSameBitsAsPlainOnes) {
  const std::size_t nx = 32, ny = 24;
  enum class Case { rows, columns, pointwise };
  for (const Case c : {Case::rows, Case::columns, Case::pointwise}) {
    std::string refusal;
    std::size_t recordings = 0;
    auto solve = [&](bool capture, std::vector<double>& sums) {
      TensorOptions<2> o;
      o.partitions = c == Case::rows ? Extent<2>{1, std::max<std::size_t>(2, parts())}
                                     : Extent<2>{2, std::max<std::size_t>(1, parts() / 2)};
      o.with_padding(1);
      Tensor<double, 2> u(memory(), Extent<2>{nx, ny}, o.named("u"));
      Tensor<double, 2> v(memory(), Extent<2>{nx, ny}, o.named("v"));
      std::vector<double> dense(nx * ny);
      for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<double>(k % 89) * 0.125;
      u.fill_from(dense.data());
      ReductionResult<double> sum;
      Graph g("captured sweep");
      if (c == Case::pointwise) {
        g.split([] TESSERA_HOST_DEVICE(auto in, auto out) { *out = 0.75 * *in + 0.5; }, u, v);
      } else {
        g.split([] TESSERA_HOST_DEVICE(auto in, auto out) {
          *out = 0.2 * (*in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1)) + 0.1 * *in;
        }, concurrent_padded_access(u), v);
      }
      g.then_split([] TESSERA_HOST_DEVICE(auto from, auto to) { *to = *from; }, v, u)
          .then_reduce(u, sum, Sum{})
          .then([&] { sums.push_back(sum.value()); });
      g.capture(capture);
      g.run_n(ex, 8).get();
      if (capture) {
        refusal = g.pass(0).capture_refusal();
        recordings = g.pass(0).recordings();
      }
      std::vector<double> got(nx * ny);
      u.gather_to(got.data());
      return got;
    };
    const char* what = c == Case::rows ? "rows" : c == Case::columns ? "columns" : "pointwise";
    std::vector<double> plain_sums, captured_sums;
    const std::vector<double> plain = solve(false, plain_sums);
    const std::vector<double> captured = solve(true, captured_sums);
    ASSERT_EQ(captured_sums.size(), 8u);
    EXPECT_EQ(plain_sums, captured_sums) << what;
    for (std::size_t k = 0; k < plain.size(); ++k) ASSERT_EQ(plain[k], captured[k]) << what << " site " << k;
    if (accelerators() == 0) {
      EXPECT_EQ(recordings, 0u);
    } else if (c == Case::columns) {
      EXPECT_NE(refusal.find("copied in"), std::string::npos) << refusal;
    } else {
      EXPECT_EQ(refusal, "") << what;
      EXPECT_GT(recordings, 0u) << what;
    }
  }
}

// An in-place kernel whose first and last rows of each block add the neighbouring block's
// edge row: correct only if every halo copy read the edge row before its owner overwrote it.
TEST_P(GraphTensors, ExclusivePaddedAccessCopiesBeforeTheOwnerWrites) {
  const std::size_t nx = 64, rows_per_block = 16, blocks = 4, ny = rows_per_block * blocks;
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, blocks};
  o.with_padding(1);
  Tensor<double, 2> u(memory(), Extent<2>{nx, ny}, o.named("u"));
  std::vector<double> ref(nx * ny);
  for (std::size_t k = 0; k < ref.size(); ++k) ref[k] = static_cast<double>(k % 7 + 1);
  u.fill_from(ref.data());
  const auto h = static_cast<std::int64_t>(rows_per_block), last = static_cast<std::int64_t>(ny) - 1;
  Graph g("in place");
  g.split([h, last] TESSERA_HOST_DEVICE(auto it) {
    const std::int64_t y = it.global_idx(1);
    double v = *it;
    if (y % h == 0 && y > 0) v += *it.offset(1, -1);
    if (y % h == h - 1 && y < last) v += *it.offset(1, 1);
    *it = v;
  }, exclusive_padded_access(u));
  // Alternating between one worker (a fixed order of ready nodes) and several. The edges
  // themselves are checked in test_graph_structure (PaddedAccessInsertsHaloNodesAndExclusiveEdges).
  ExecutorOptions one;
  one.gpu_workers = 1;
  one.cpu_workers = 0;
  Executor single(one);
  const int runs = 10;  // values stay below 3^10 * 7: exact in double
  for (int r = 0; r < runs; ++r) {
    g.run(r % 2 == 0 ? single : ex).get();
    std::vector<double> next = ref;
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        if (y % rows_per_block == 0 && y > 0) next[y * nx + x] += ref[(y - 1) * nx + x];
        if (y % rows_per_block == rows_per_block - 1 && y + 1 < ny) next[y * nx + x] += ref[(y + 1) * nx + x];
      }
    ref = next;
    std::vector<double> got(nx * ny);
    u.gather_to(got.data());
    for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], ref[k]) << "site " << k << " after run " << r;
  }
}

// Ripple Listing 9: init sets x = 4; the map-reduce pass subtracts 1 and sums, and repeats
// while the sum is not zero: exactly four passes.
TEST_P(GraphTensors, ConditionalMapReduceRunsUntilThePredicateFails) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  Tensor<double, 1> x(memory(), Extent<1>{100}, o.named("x"));
  ReductionResult<double> sum;
  int passes = 0;
  Graph init("init"), map_reduce("map reduce");
  init.split([] TESSERA_HOST_DEVICE(auto it) { *it = 4.0; }, x);
  map_reduce.split([] TESSERA_HOST_DEVICE(auto it) { *it -= 1.0; }, x)
      .then_reduce(x, sum, Sum{})
      .conditional([&] {
        ++passes;
        return sum.value() != 0.0;
      });
  init.then(map_reduce);
  EXPECT_EQ(init.num_passes(), 2u);
  init.run(ex).get();
  EXPECT_EQ(passes, 4);
  EXPECT_EQ(sum.value(), 0.0);
}

// A split that reduces as it runs (reduce_into): its final node combines the blocks' partials
// before the next level, every run, and a conditional reads the result of its own pass. The
// same map-reduce as above, with the reduction in the kernel, and a 2-D stencil over halo nodes.
TEST_P(GraphTensors, SplitWithReduceIntoFinishesBeforeTheNextLevel) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  Tensor<double, 1> x(memory(), Extent<1>{100}, o.named("x"));
  ReductionResult<double> sum;
  std::vector<double> seen;
  int passes = 0;
  Graph init("init"), map_reduce("map reduce");
  init.split([] TESSERA_HOST_DEVICE(auto it) { *it = 4.0; }, x);
  map_reduce
      .split([] TESSERA_HOST_DEVICE(auto it, auto c) { *c = *it -= 1.0; }, x, reduce_into(sum, Sum{}))
      .then([&] { seen.push_back(sum.value()); })
      .conditional([&] {
        ++passes;
        return sum.value() != 0.0;
      });
  EXPECT_EQ(map_reduce.count(GraphNodeRole::reduce_final), 1u);
  init.then(map_reduce);
  init.run(ex).get();
  EXPECT_EQ(passes, 4);
  EXPECT_EQ(seen, (std::vector<double>{300.0, 200.0, 100.0, 0.0}));

  // Jacobi in 2-D, largest change reduced in the sweep, run twice from the same start.
  const Extent<2> n{40, 24};
  TensorOptions<2> p;
  p.partitions = Extent<2>{2, parts() / 2 > 0 ? parts() / 2 : 1};
  p.padding = Index<2>{1, 1};
  Tensor<double, 2> u(memory(), n, p.named("u")), v(memory(), n, p.named("v"));
  std::vector<double> start(n.volume());
  for (std::size_t k = 0; k < start.size(); ++k) start[k] = static_cast<double>((k * 7919) % 113);
  std::vector<double> want(n.volume());
  double largest = 0;
  const auto nx = static_cast<std::int64_t>(n.sizes[0]), ny = static_cast<std::int64_t>(n.sizes[1]);
  auto at = [&](std::int64_t i, std::int64_t j) {
    return i < 0 || j < 0 || i >= nx || j >= ny ? 0.0 : start[static_cast<std::size_t>(j * nx + i)];
  };
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const double a = (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1)) / 4.0;
      want[static_cast<std::size_t>(j * nx + i)] = a;
      largest = std::max(largest, std::fabs(a - at(i, j)));
    }
  ReductionResult<double> change;
  Graph sweep("sweep");
  sweep.split(
      [] TESSERA_HOST_DEVICE(auto in, auto out, auto c) {
        *out = (*in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1)) / 4.0;
        *c = std::fabs(*out - *in);
      },
      concurrent_padded_access(u), write_only(v), reduce_into(change, Max{}));
  for (int run = 0; run < 2; ++run) {
    u.fill_from(start.data());
    sweep.run(ex).get();
    ASSERT_TRUE(change.is_complete());
    EXPECT_EQ(change.value(), largest);
    std::vector<double> got(n.volume());
    v.gather_to(got.data());
    EXPECT_EQ(got, want);
  }
}

// A std::cref argument is read each time the node runs.
TEST_P(GraphTensors, ReferenceArgumentsAreReadWhenTheNodeRuns) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  Tensor<float, 1> x(memory(), Extent<1>{50}, o.named("x"));
  float step = 1.0f;
  int runs = 0;
  Graph g("cref");
  g.split([] TESSERA_HOST_DEVICE(auto it, float a) { *it += a; }, x, std::cref(step)).then([&] {
    step *= 2.0f;
    ++runs;
  });
  g.run_until(ex, [&] { return runs == 3; }).get();
  std::vector<float> got(50);
  x.gather_to(got.data());
  for (float v : got) EXPECT_EQ(v, 1.0f + 2.0f + 4.0f);
}

// The same graph, built once, with a shared-memory variant of padded access.
TEST_P(GraphTensors, PaddedAccessInSharedMatchesGlobal) {
  const std::size_t n = 40;
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  o.with_padding(1);
  Tensor<float, 1> u(memory(), Extent<1>{n}, o.named("u"));
  TensorOptions<1> po = o;
  po.padding = Index<1>{};
  Tensor<float, 1> a(memory(), Extent<1>{n}, po.named("a"));
  Tensor<float, 1> b(memory(), Extent<1>{n}, po.named("b"));
  std::vector<float> dense(n);
  for (std::size_t i = 0; i < n; ++i) dense[i] = static_cast<float>(i * i % 31);
  u.fill_from(dense.data());
  auto diff = [] TESSERA_HOST_DEVICE(auto in, auto out) { *out = *in.offset(0, 1) - *in.offset(0, -1); };
  ExecOptions small;
  small.block[0] = 4;
  Graph g("shared");
  g.split(diff, concurrent_padded_access(u), a).then_split(small, diff, concurrent_padded_access_in_shared(u), b);
  g.run(ex).get();
  std::vector<float> ga(n), gb(n);
  a.gather_to(ga.data());
  b.gather_to(gb.data());
  for (std::size_t i = 0; i < n; ++i) {
    const float left = i == 0 ? 0.0f : dense[i - 1], right = i + 1 == n ? 0.0f : dense[i + 1];
    EXPECT_EQ(ga[i], right - left) << i;
    EXPECT_EQ(gb[i], ga[i]) << i;
  }
}

// The trace of a run shows the halo nodes, and on devices the copies on the devices' streams
// beside the kernels.
TEST_P(GraphTensors, TraceShowsHaloNodesAndDeviceCopies) {
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, parts()};
  o.padding = Index<2>{0, 1};
  Tensor<float, 2> u(memory(), Extent<2>{64, 64}, o.named("u"));
  TensorOptions<2> po = o;
  po.padding = Index<2>{};
  Tensor<float, 2> v(memory(), Extent<2>{64, 64}, po.named("v"));
  Graph g("traced");
  g.split([] TESSERA_HOST_DEVICE(auto in, auto out) { *out = *in.offset(1, 1) + *in.offset(1, -1); },
          concurrent_padded_access(u), v)
      .named("sum");
  g.run(ex).get();  // places the replicas, so the traced run copies only halos
  ex.start_trace();
  g.run(ex).get();
  memory().synchronize();
  const Trace trace = ex.stop_trace();
  std::size_t halos = 0, kernels = 0, device_copies = 0;
  for (const TraceEvent& e : trace.events) {
    halos += e.name.find("sum halo") != std::string::npos ? 1 : 0;
    kernels += e.name.find("sum [b") != std::string::npos ? 1 : 0;
    device_copies += e.category == "copy" ? 1 : 0;
  }
  EXPECT_EQ(halos, 2 * (parts() - 1));
  EXPECT_EQ(kernels, parts());
  if (accelerators() > 1) {
    EXPECT_GE(device_copies, 2 * (parts() - 1)) << "halo rows copied device to device";
  }
}

TENSOR_TEST_ON_DEVICES(GraphTensors);

}  // namespace
