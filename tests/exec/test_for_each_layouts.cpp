// The same kernels give identical results in every layout, on every device set, for every
// partitioning and virtual vector length.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>
#include <memory>
#include <type_traits>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

using namespace tessera;

namespace {

using tensor_test::Particle;

class ForEachLayouts : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

// Dyadic values and dt = 0.5, so v * dt and the sums are exact in any order of evaluation.
Particle<float> initial(std::size_t k) {
  const float f = static_cast<float>(k % 1000);
  return Particle<float>({f, -f, 0.25f * f}, {1.0f + f, 2.0f, -0.5f * f});
}

template <typename L>
void check_particles(Executor& ex, MemoryManager& memory, Extent<3> n, Extent<3> partitions, std::int64_t pad_x,
                     std::size_t vvl) {
  TensorOptions<3> o;
  o.partitions = partitions;
  o.padding = Index<3>{pad_x, 0, 0};
  Tensor<Particle<float>, 3, L> t(memory, n, o.named("particles"));
  std::vector<Particle<float>> dense(n.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = initial(k);
  t.fill_from(dense.data());
  ExecOptions eo;
  eo.vvl = vvl;
  for (int step = 0; step < 3; ++step)
    for_each(ex, eo, [] TESSERA_HOST_DEVICE(auto p, float dt) { p->update(dt); }, t, 0.5f);
  std::vector<Particle<float>> got(n.volume());
  t.gather_to(got.data());
  for (std::size_t k = 0; k < got.size(); ++k) {
    Particle<float> want = initial(k);
    for (int step = 0; step < 3; ++step) want.update(0.5f);
    ASSERT_TRUE(got[k].position() == want.position() && got[k].velocity() == want.velocity())
        << L::name << " site " << k << " vvl " << vvl;
  }
}

TEST_P(ForEachLayouts, ParticleUpdateIsIdenticalInEveryLayout) {
  const Extent<3> n{37, 5, 4};
  for (std::size_t vvl : {0, 1, 3, 8, 16}) {
    check_particles<Contiguous>(ex, memory(), n, Extent<3>{1, 1, 2}, 0, vvl);
    check_particles<Strided>(ex, memory(), n, Extent<3>{1, 2, 1}, 1, vvl);
    check_particles<Tiled<8>>(ex, memory(), n, Extent<3>{1, 1, 4}, 3, vvl);  // strips start 5 sites in
    check_particles<Tiled<16>>(ex, memory(), n, Extent<3>{2, 1, 1}, 0, vvl);
  }
}

TEST_P(ForEachLayouts, SaxpyOverALongOneDimensionalTensor) {
  // Long enough that the CPU path splits the single row into chunks for the workers.
  const Extent<1> n{100003};
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  Tensor<float, 1> x(memory(), n, TensorOptions<1>(o).named("x"));
  Tensor<float, 1> y(memory(), n, TensorOptions<1>(o).named("y"));
  std::vector<float> xs(n.volume()), ys(n.volume());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(i % 977);
    ys[i] = static_cast<float>(i % 13) * 0.25f;
  }
  x.fill_from(xs.data());
  y.fill_from(ys.data());
  for_each(ex, [] TESSERA_HOST_DEVICE(auto xi, auto yi, float a) { *yi += a * *xi; }, x, y, 2.0f);
  std::vector<float> got(n.volume());
  y.gather_to(got.data());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], ys[i] + 2.0f * xs[i]) << i;
}

// A kernel's constants, however it holds them: members of a small trivially copyable functor
// (copied into each row's loop), of one over 512 bytes, or behind a member that is not trivially
// copyable (both called through the caller's reference). Same values in every layout.
struct SmallAffine {
  double a, b;
  template <typename X, typename Y>
  TESSERA_HOST_DEVICE void operator()(X x, Y y) const {
    *y = a * *x + b * static_cast<double>(x.global_idx(1));
  }
};
struct LargeAffine {
  double a, b;
  double unused[128];
  template <typename X, typename Y>
  TESSERA_HOST_DEVICE void operator()(X x, Y y) const {
    *y = a * *x + b * static_cast<double>(x.global_idx(1));
  }
};
struct SharedAffine {
  std::shared_ptr<const double[]> ab;
  template <typename X, typename Y>
  void operator()(X x, Y y) const {
    *y = ab[0] * *x + ab[1] * static_cast<double>(x.global_idx(1));
  }
};
static_assert(!std::is_reference_v<decltype(detail::loop_local(std::declval<SmallAffine&>()))>);
static_assert(std::is_reference_v<decltype(detail::loop_local(std::declval<LargeAffine&>()))>);
static_assert(std::is_reference_v<decltype(detail::loop_local(std::declval<SharedAffine&>()))>);

template <typename L, typename K>
void check_affine(Executor& ex, MemoryManager& memory, const K& kernel) {
  const Extent<2> n{53, 6};
  TensorOptions<2> o;
  o.partitions = Extent<2>{2, 2};
  Tensor<double, 2, L> x(memory, n, TensorOptions<2>(o).named("x")), y(memory, n, TensorOptions<2>(o).named("y"));
  std::vector<double> xs(n.volume());
  for (std::size_t k = 0; k < xs.size(); ++k) xs[k] = static_cast<double>(k % 31) * 0.5;
  x.fill_from(xs.data());
  for_each(ex, kernel, read_only(x), write_only(y));
  std::vector<double> got(n.volume());
  y.gather_to(got.data());
  for (std::size_t k = 0; k < got.size(); ++k)
    ASSERT_EQ(got[k], 3.0 * xs[k] - 0.25 * static_cast<double>(k / n.sizes[0])) << L::name << " site " << k;
}

TEST_P(ForEachLayouts, KernelConstantsAreSeenWhereverTheKernelKeepsThem) {
  const SmallAffine small{3.0, -0.25};
  LargeAffine large{3.0, -0.25, {}};
  const SharedAffine shared{std::shared_ptr<const double[]>(new double[2]{3.0, -0.25})};
  check_affine<Strided>(ex, memory(), small);
  check_affine<Contiguous>(ex, memory(), small);
  check_affine<Tiled<8>>(ex, memory(), small);
  check_affine<Strided>(ex, memory(), large);
  check_affine<Tiled<8>>(ex, memory(), large);
  check_affine<Contiguous>(ex, memory(), shared);
  check_affine<Tiled<8>>(ex, memory(), shared);
}

TENSOR_TEST_ON_DEVICES(ForEachLayouts);

}  // namespace
