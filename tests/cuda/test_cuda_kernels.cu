// for_each and reduce on a GPU give what the host gives: every layout, the global-memory and
// in_shared paths (in_shared(read_only(u)) too), read_only/write_only arguments, edge kernels,
// and the CUB block reduction. Skips, with the reason, where no GPU is present.

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "../exec/edge_visits.hpp"
#include "../layout/layout_test_types.hpp"
#include "cuda_test_support.hpp"

using namespace tessera;

namespace {

using layout_test::Particle;  // the one test Particle (docs/layout.md)

Particle<float> initial(std::size_t k) {
  const float f = static_cast<float>(k % 1000);
  return Particle<float>({f, -f, 0.25f * f}, {1.0f + f, 2.0f, -0.5f * f});
}

struct Update {
  TESSERA_HOST_DEVICE void operator()(auto p, float dt) const { p->update(dt); }
};

template <typename L>
void check_particles_on_gpu(MemoryManager& memory, Executor& ex) {
  const Extent<3> n{67, 9, 8};
  TensorOptions<3> o;
  o.partitions = Extent<3>{1, 1, 2};
  Tensor<Particle<float>, 3, L> t(memory, n, o.named("particles"));
  std::vector<Particle<float>> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = initial(k);
  t.fill_from(dense.data());
  for (int step = 0; step < 3; ++step) for_each(ex, Update{}, t, 0.5f);
  std::vector<Particle<float>> got(n.volume());
  t.gather_to(got.data());
  for (std::size_t k = 0; k < got.size(); ++k) {
    Particle<float> want = initial(k);
    for (int step = 0; step < 3; ++step) want.update(0.5f);
    ASSERT_TRUE(got[k].position() == want.position() && got[k].velocity() == want.velocity()) << L::name << " " << k;
  }
}

struct Stencil {
  TESSERA_HOST_DEVICE void operator()(auto in, auto out) const {
    *out = 2.0f * (*in.offset(0, 1) - *in.offset(0, -1)) + *in.offset(1, 1) - *in.offset(1, -1) +
           *in.offset(0, 1).offset(1, -1);
  }
};

TEST(CudaKernels, ParticleUpdateMatchesTheHostInEveryLayout) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  check_particles_on_gpu<Contiguous>(memory, ex);
  check_particles_on_gpu<Strided>(memory, ex);
  check_particles_on_gpu<Tiled<8>>(memory, ex);
}

TEST(CudaKernels, InSharedEqualsTheGlobalMemoryPath) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  const Extent<2> n{75, 41};
  Tensor<float, 2, Strided> u(memory, n, TensorOptions<2>{}.with_padding(1).named("u"));
  Tensor<float, 2, Strided> a(memory, n, TensorOptions<2>{}.named("a"));
  Tensor<float, 2, Strided> b(memory, n, TensorOptions<2>{}.named("b"));
  std::vector<float> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<float>(k % 251);
  u.fill_from(dense.data());
  u.load_boundary(Periodic{});
  ExecOptions eo;
  eo.block[0] = 32;
  eo.block[1] = 4;
  Tensor<float, 2, Strided> r(memory, n, TensorOptions<2>{}.named("r"));
  for_each(ex, eo, Stencil{}, u, a);
  for_each(ex, eo, Stencil{}, in_shared(u), b);
  for_each(ex, eo, Stencil{}, in_shared(read_only(u)), write_only(r));
  std::vector<float> ga(n.volume()), gb(n.volume()), gr(n.volume()), gu(n.volume());
  a.gather_to(ga.data());
  b.gather_to(gb.data());
  r.gather_to(gr.data());
  u.gather_to(gu.data());
  EXPECT_EQ(ga, gb);
  EXPECT_EQ(ga, gr) << "in_shared(read_only(u)) stages u as in_shared(u) does";
  EXPECT_EQ(gu, dense) << "a read-only stage is not written back";
  ExecOptions cpu = eo;
  cpu.kind = ExecKind::cpu;
  Tensor<float, 2, Strided> c(memory, n, TensorOptions<2>{}.named("c"));
  for_each(ex, cpu, Stencil{}, u, c);
  std::vector<float> gc(n.volume());
  c.gather_to(gc.data());
  EXPECT_EQ(ga, gc) << "the GPU and the host compute the same stencil";
}

struct FluidLike {
  // A Record stencil over read_only u into write_only out: on the GPU the views of u have const
  // members, and the result must be what the undeclared launch and the host give.
  template <typename U, typename O>
  TESSERA_HOST_DEVICE void operator()(U u, O out) const {
    (*out).position() = (*u.offset(0, 1)).velocity() - (*u.offset(0, -1)).position() + (*u.offset(1, 1)).position();
    (*out).velocity() = (*u).velocity();
  }
};

template <typename L>
void check_declared_access_on_gpu(MemoryManager& memory, Executor& ex) {
  const Extent<2> n{70, 33};
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, 2};
  o.with_padding(1);
  Tensor<Particle<float>, 2, L> u(memory, n, TensorOptions<2>(o).named("u"));
  Tensor<Particle<float>, 2, L> plain(memory, n, TensorOptions<2>(o).named("plain"));
  Tensor<Particle<float>, 2, L> declared(memory, n, TensorOptions<2>(o).named("declared"));
  Tensor<Particle<float>, 2, L> host(memory, n, TensorOptions<2>(o).named("host"));
  std::vector<Particle<float>> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = initial(k);
  u.fill_from(dense.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  for_each(ex, FluidLike{}, u, plain);
  for_each(ex, FluidLike{}, read_only(u), write_only(declared));
  ExecOptions cpu;
  cpu.kind = ExecKind::cpu;
  for_each(ex, cpu, FluidLike{}, read_only(u), write_only(host));
  std::vector<Particle<float>> a(n.volume()), b(n.volume()), c(n.volume());
  plain.gather_to(a.data());
  declared.gather_to(b.data());
  host.gather_to(c.data());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_TRUE(a[k].position() == b[k].position() && a[k].velocity() == b[k].velocity()) << L::name << " " << k;
    ASSERT_TRUE(a[k].position() == c[k].position() && a[k].velocity() == c[k].velocity()) << L::name << " " << k;
  }
}

TEST(CudaKernels, DeclaredAccessGivesThePlainResult) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  check_declared_access_on_gpu<Contiguous>(memory, ex);
  check_declared_access_on_gpu<Strided>(memory, ex);
  check_declared_access_on_gpu<Tiled<16>>(memory, ex);
}

/// count integer values below 10007 (exact sums in any order), shifted by `shift` a run.
std::vector<double> integers(std::size_t count, std::size_t shift = 0) {
  std::vector<double> v(count);
  for (std::size_t k = 0; k < count; ++k) v[k] = static_cast<double>((k * 7919 + shift) % 10007);
  return v;
}
/// Their sum and their largest odd value, folded on the host.
struct HostFolds {
  double sum = 0, odd_max = std::numeric_limits<double>::lowest();
};
HostFolds host_folds(const std::vector<double>& values) {
  HostFolds f;
  for (double v : values) {
    f.sum += v;  // integers below 2^53: exact in any order
    if (static_cast<long long>(v) % 2 == 1) f.odd_max = std::max(f.odd_max, v);
  }
  return f;
}

TEST(CudaKernels, CubReductionsMatchTheHost) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  const Extent<2> n{513, 257};
  Tensor<double, 2> t(memory, n, TensorOptions<2>{}.named("t"));
  const std::vector<double> dense = integers(n.volume());
  t.fill_from(dense.data());
  ReductionResult<double> sum, hi, lo;
  reduce(ex, t, sum, Sum{});
  reduce(ex, t, hi, Max{});
  reduce(ex, t, lo, Min{});
  EXPECT_EQ(sum.value(), host_folds(dense).sum);
  EXPECT_EQ(hi.value(), *std::max_element(dense.begin(), dense.end()));
  EXPECT_EQ(lo.value(), *std::min_element(dense.begin(), dense.end()));
}

// ExecOptions::edge_width on a GPU: the grid over a block's edge boxes runs the kernel at exactly
// the sites within w of the domain's faces, once each, however the tensor is cut (a block that
// touches no face launches nothing).
TEST(CudaKernels, EdgeKernelsVisitEachEdgeSiteOnce) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  for (std::size_t w : {1, 2, 9}) {
    edge_test::check_visits<2>(ex, memory, Extent<2>{37, 23}, Extent<2>{1, 1}, w);
    edge_test::check_visits<2>(ex, memory, Extent<2>{37, 23}, Extent<2>{1, 3}, w);
    edge_test::check_visits<2>(ex, memory, Extent<2>{37, 23}, Extent<2>{3, 3}, w);
  }
  edge_test::check_visits<3>(ex, memory, Extent<3>{11, 9, 7}, Extent<3>{2, 1, 2}, 1);
}

struct TwiceContributing {
  TESSERA_HOST_DEVICE void operator()(auto in, auto out, auto c) const { *c = *out = 2.0 * *in; }
};
struct OddContributing {
  TESSERA_HOST_DEVICE void operator()(auto in, auto c) const {
    if (static_cast<long long>(*in) % 2 == 1) *c = *in;
  }
};

// reduce_into on a GPU: each thread block's partial, then the CUB reduction of the partials,
// over two blocks, with the kernel's own writes unchanged.
TEST(CudaKernels, ReduceIntoMatchesTheHost) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  const Extent<2> n{513, 257};
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, 2};
  Tensor<double, 2> t(memory, n, o.named("t")), twice(memory, n, o.named("twice"));
  const std::vector<double> dense = integers(n.volume());
  t.fill_from(dense.data());
  ReductionResult<double> sum, hi;
  for_each(ex, TwiceContributing{}, read_only(t), write_only(twice), reduce_into(sum, Sum{}));
  // Only odd values store: the others contribute Max's identity.
  for_each(ex, OddContributing{}, read_only(t), reduce_into(hi, Max{}));
  const HostFolds want = host_folds(dense);
  EXPECT_EQ(sum.value(), 2.0 * want.sum);
  EXPECT_EQ(hi.value(), want.odd_max);
  std::vector<double> got(n.volume());
  twice.gather_to(got.data());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], 2.0 * dense[k]) << k;
}

struct NeighbourContributing {
  TESSERA_HOST_DEVICE void operator()(auto in, auto out, auto c) const {
    const double v = *in.offset(0, 1) + *in.offset(0, -1) + 3.0 * *in.offset(1, 1) - *in.offset(2, -1);
    *out = v;
    *c = v;
  }
};

// Each thread block folds its threads' contributions however many threads it has: by warp
// shuffles in blocks of whole warps (32x4 widened in x to 256 threads, 8x8x4), as a tree in
// shared memory in blocks that end in a partial warp (5x3x3 widened to 270 threads, 7x1x1 to
// 259). Over a 3-D tensor cut in two, each gives the host's exact integer sum and largest
// value, and the kernel's writes.
TEST(CudaKernels, ReduceIntoFoldsEveryThreadBlockShape) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  const Extent<3> n{37, 11, 9};
  TensorOptions<3> o;
  o.partitions = Extent<3>{1, 1, 2};
  o.with_padding(1);
  Tensor<double, 3> u(memory, n, TensorOptions<3>(o).named("u")), out(memory, n, TensorOptions<3>(o).named("out"));
  const std::vector<double> dense = integers(n.volume());
  u.fill_from(dense.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  ExecOptions cpu;
  cpu.kind = ExecKind::cpu;
  ReductionResult<double> want_sum, want_max;
  for_each(ex, cpu, NeighbourContributing{}, read_only(u), write_only(out), reduce_into(want_sum, Sum{}));
  for_each(ex, cpu, NeighbourContributing{}, read_only(u), write_only(out), reduce_into(want_max, Max{}));
  std::vector<double> want_out(n.volume()), got_out(n.volume());
  out.gather_to(want_out.data());
  const std::size_t shapes[][3] = {{5, 3, 3}, {7, 1, 1}, {32, 4, 1}, {8, 8, 4}};
  for (const auto& shape : shapes) {
    ExecOptions eo;
    for (int d = 0; d < 3; ++d) eo.block[d] = shape[d];
    const std::string name = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
    ReductionResult<double> sum, hi;
    for_each(ex, eo, NeighbourContributing{}, read_only(u), write_only(out), reduce_into(sum, Sum{}));
    for_each(ex, eo, NeighbourContributing{}, read_only(u), write_only(out), reduce_into(hi, Max{}));
    out.gather_to(got_out.data());
    EXPECT_EQ(got_out, want_out) << name;
    EXPECT_EQ(sum.value(), want_sum.value()) << name;
    EXPECT_EQ(hi.value(), want_max.value()) << name;
  }
}

// A Graph's reductions on the GPU leave each block's total in a pinned slot by a copy in stream
// order (no host function): a reduce and a split's reduce_into over three blocks, run five
// times with the data changing between runs, give the host's exact integer results every time.
TEST(CudaKernels, GraphReductionsOverBlocksMatchTheHost) {
  SKIP_WITHOUT_GPU();
  DeviceSet devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  MemoryManager memory(devices);
  Executor ex{ExecutorOptions{}};
  const Extent<2> n{301, 97};
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, 3};
  Tensor<double, 2> t(memory, n, o.named("t")), twice(memory, n, o.named("twice"));
  ReductionResult<double> plain, sum, hi;
  Graph g("reductions");
  g.reduce(t, plain, Sum{}).then_split(OddContributing{}, read_only(t), reduce_into(hi, Max{}));
  g.then_split(TwiceContributing{}, read_only(t), write_only(twice), reduce_into(sum, Sum{}));
  for (std::size_t run = 0; run < 5; ++run) {
    const std::vector<double> dense = integers(n.volume(), 13 * run);
    t.fill_from(dense.data());
    g.run(ex).get();
    const HostFolds want = host_folds(dense);
    EXPECT_EQ(plain.value(), want.sum) << "run " << run;
    EXPECT_EQ(sum.value(), 2.0 * want.sum) << "run " << run;
    EXPECT_EQ(hi.value(), want.odd_max) << "run " << run;
  }
}

}  // namespace
