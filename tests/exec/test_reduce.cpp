// Reductions against a sequential reference: sums within a rounding bound, max and min exact,
// mapped reductions over Record tensors, on host, sim:1 and sim:4 with several partitionings.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tessera/exec.hpp>
#include <tessera/tensor/tensor.hpp>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

using namespace tessera;

namespace {

class Reduce : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
};

TEST_P(Reduce, SumMaxAndMinMatchASequentialPass) {
  const Extent<2> n{301, 67};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> v(n.volume());
  for (float& f : v) f = dist(rng);
  double exact = 0, magnitude = 0;
  for (float f : v) {
    exact += f;
    magnitude += std::fabs(f);
  }
  const float max = *std::max_element(v.begin(), v.end());
  const float min = *std::min_element(v.begin(), v.end());

  for (Extent<2> parts : {Extent<2>{1, 1}, Extent<2>{1, 4}, Extent<2>{3, 2}}) {
    TensorOptions<2> o;
    o.partitions = parts;
    o.sub_partitions = Extent<2>{1, 2};
    Tensor<float, 2, Strided> t(memory(), n, o.named("t"));
    t.fill_from(v.data());
    ReductionResult<float> sum, hi, lo;
    EXPECT_FALSE(sum.is_complete());
    reduce(ex, t, sum, Sum{});
    reduce(ex, t, hi, Max{});
    reduce(ex, t, lo, Min{});
    ASSERT_TRUE(sum.is_complete() && hi.is_complete() && lo.is_complete());
    // Summing n floats in any order differs from the exact sum by at most (n - 1) * eps * sum|x|
    // (Higham, Accuracy and Stability of Numerical Algorithms, eq. 4.4); the reduction's order
    // depends on partitions and workers, so that bound, not equality, is what can be asserted.
    const double bound = (static_cast<double>(n.volume()) - 1) * std::numeric_limits<float>::epsilon() * magnitude;
    EXPECT_NEAR(sum.value(), exact, bound);
    EXPECT_EQ(hi.value(), max);
    EXPECT_EQ(lo.value(), min);
  }
}

TEST_P(Reduce, OneNanCellMakesMaxAndMinNanWhereverItIs) {
  const Extent<2> n{37, 29};
  std::vector<double> v(n.volume());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i));
  // First site, last site, and a middle one, so the NaN is met first, last or between in every
  // block order and partitioning; CUB's block reduction on a GPU combines in yet another order.
  for (std::size_t at : {std::size_t{0}, v.size() - 1, v.size() / 2 + 3}) {
    std::vector<double> w = v;
    w[at] = std::numeric_limits<double>::quiet_NaN();
    for (Extent<2> parts : {Extent<2>{1, 1}, Extent<2>{1, 4}, Extent<2>{3, 2}}) {
      TensorOptions<2> o;
      o.partitions = parts;
      Tensor<double, 2> t(memory(), n, o.named("t"));
      t.fill_from(w.data());
      ReductionResult<double> hi, lo;
      reduce(ex, t, hi, Max{});
      reduce(ex, t, lo, Min{});
      EXPECT_TRUE(std::isnan(hi.value())) << "NaN at " << at << " dropped by Max: " << hi.value();
      EXPECT_TRUE(std::isnan(lo.value())) << "NaN at " << at << " dropped by Min: " << lo.value();
    }
  }
  // Integers have no NaN: the reducers are unchanged for them.
  EXPECT_EQ(Max{}(3, 7), 7);
  EXPECT_EQ(Min{}(3, 7), 3);
}

template <typename T, typename S = Owned>
struct Body : Record<S, Vector<T, 3>, T> {
  TESSERA_RECORD(Body)
  TESSERA_FIELD(velocity, 0)
  TESSERA_FIELD(mass, 1)
};

TEST_P(Reduce, MappedReductionOverRecords) {
  const Extent<3> n{9, 8, 7};
  std::vector<Body<double>> bodies(n.volume());
  double max_speed2 = 0, total_mass = 0;
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    const double f = static_cast<double>(k);
    bodies[k] = Body<double>({std::sin(f), std::cos(2 * f), 0.5 * std::sin(3 * f)}, 1.0 + static_cast<double>(k % 5));
    max_speed2 = std::max(max_speed2, dot(bodies[k].velocity(), bodies[k].velocity()));
    total_mass += bodies[k].mass();  // small integers: exact in any order
  }
  TensorOptions<3> o;
  o.partitions = Extent<3>{1, 2, 2};
  Tensor<Body<double>, 3, Tiled<8>> t(memory(), n, o.named("bodies"));
  t.fill_from(bodies.data());
  ReductionResult<double> speed2, mass;
  reduce(ex, t, speed2, Max{}, [] TESSERA_HOST_DEVICE(auto it) { return dot(it->velocity(), it->velocity()); });
  reduce(ex, t, mass, Sum{}, [] TESSERA_HOST_DEVICE(auto it) { return it->mass(); });
  EXPECT_EQ(speed2.value(), max_speed2);
  EXPECT_EQ(mass.value(), total_mass);
}

TEST(ReductionResult, ValueBeforeCompletionIsAnError) {
  ReductionResult<int> r;
  try {
    (void)r.value();
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has not completed"), std::string::npos) << e.what();
  }
  r.set(3);
  EXPECT_EQ(r.value(), 3);
  r.reset();
  EXPECT_FALSE(r.is_complete());
}

TENSOR_TEST_ON_DEVICES(Reduce);

}  // namespace
