// The shock-bubble problem gives the same state however the domain is partitioned, wherever the
// blocks live, and in every layout: bitwise for one layout and device kind (every cell's update
// reads the same neighbours in the same order, and Max reductions are exact), within round-off
// across layouts and devices.

#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include "../../../tests/tensor/tensor_test_support.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

euler2d::Problem small_shock_bubble() {
  euler2d::ShockBubble config;
  config.nx = 40;  // not a multiple of the tile width, so Tiled rows end in a partial tile
  config.ny = 24;
  return euler2d::shock_bubble(config);
}
constexpr std::size_t steps = 12;  // the shock reaches the bubble and the bubble starts to deform

template <typename T, typename L>
std::vector<euler2d::State<T>> run(tessera::MemoryManager& memory, tessera::Extent<2> parts, double* time = nullptr) {
  tessera::Executor executor;
  euler2d::SolverOptions options;
  options.partitions = parts;
  euler2d::EulerSolver<T, L> solver(memory, executor, small_shock_bubble(), options);
  solver.run(steps);
  if (time) *time = solver.time();
  std::vector<euler2d::State<T>> cells = solver.gather();
  memory.synchronize();
  return cells;
}

/// The reference: Strided, one partition, on the host.
const std::vector<euler2d::State<double>>& reference(double* time = nullptr) {
  static double t = 0;
  static const std::vector<euler2d::State<double>> cells = [] {
    tessera::DeviceSet devices = tessera::DeviceSet::select("host");
    tessera::MemoryManager memory(devices);
    return run<double, tessera::Strided>(memory, tessera::Extent<2>{1, 1}, &t);
  }();
  if (time) *time = t;
  return cells;
}

template <typename T>
bool bitwise_equal(const std::vector<euler2d::State<T>>& a, const std::vector<euler2d::State<T>>& b) {
  static_assert(sizeof(euler2d::State<T>) == 4 * sizeof(T), "State<T> holds its four scalars and nothing else");
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(euler2d::State<T>)) == 0;
}

/// The largest difference over density, energy / 25 and velocity (each field over its scale).
double largest_difference(const std::vector<euler2d::State<double>>& a, const std::vector<euler2d::State<double>>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d[4] = {a[k].density() - b[k].density(), (a[k].energy() - b[k].energy()) / 25.0,
                         a[k].velocity()[0] - b[k].velocity()[0], a[k].velocity()[1] - b[k].velocity()[1]};
    for (double x : d)
      if (!(std::fabs(x) <= worst)) worst = std::isnan(x) ? INFINITY : std::fabs(x);  // NaN counts as infinite
  }
  return worst;
}

class Partitions : public tensor_test::OnDevices {
 protected:

  template <typename L>
  void check_layout() {
    const std::vector<euler2d::State<double>> one = run<double, L>(memory(), tessera::Extent<2>{1, 1});
    for (tessera::Extent<2> parts : {tessera::Extent<2>{1, 2}, tessera::Extent<2>{1, 4}, tessera::Extent<2>{2, 2}}) {
      const std::vector<euler2d::State<double>> many = run<double, L>(memory(), parts);
      EXPECT_TRUE(bitwise_equal(one, many)) << L::name << " with partitions " << parts.sizes[0] << " x "
                                            << parts.sizes[1] << " differs from one partition by "
                                            << largest_difference(one, many);
    }
    // Across layouts and devices the arithmetic is the same too, but the compiler may vectorise
    // each loop differently; 1e-12 of the fields' scale (density ~4, energy ~25 behind the
    // shock, velocity ~3) allows a few ulps grown over 12 steps.
    const double across = largest_difference(one, reference());
    std::printf("%s on %s: largest difference from Strided on the host %.3e\n", L::name, GetParam().c_str(), across);
    EXPECT_LE(across, 1e-12) << L::name << " on " << GetParam();
  }
};

TEST_P(Partitions, ContiguousIsTheSameForAnyPartitioning) { check_layout<tessera::Contiguous>(); }
TEST_P(Partitions, StridedIsTheSameForAnyPartitioning) { check_layout<tessera::Strided>(); }
TEST_P(Partitions, TiledIsTheSameForAnyPartitioning) { check_layout<tessera::Tiled<8>>(); }

TEST_P(Partitions, SinglePrecisionIsTheSameForAnyPartitioning) {
  const std::vector<euler2d::State<float>> one = run<float, tessera::Strided>(memory(), tessera::Extent<2>{1, 1});
  const std::vector<euler2d::State<float>> four = run<float, tessera::Strided>(memory(), tessera::Extent<2>{1, 4});
  EXPECT_TRUE(bitwise_equal(one, four));
  // And close to double: float round-off (6e-8 relative) grown over 12 steps stays below 1e-4.
  const std::vector<euler2d::State<double>>& ref = reference();
  double worst = 0;
  for (std::size_t k = 0; k < one.size(); ++k) {
    const double d = std::fabs(static_cast<double>(one[k].density()) - ref[k].density());
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  std::printf("float against double: largest density difference %.3e\n", worst);
  EXPECT_LT(worst, 1e-4);
}

TEST_P(Partitions, TheProblemIsNotTrivial) {
  // The comparisons above mean something only if the state changed: the shock has moved and
  // the bubble's density has risen where the shock hit it.
  double t = 0;
  const std::vector<euler2d::State<double>>& cells = reference(&t);
  EXPECT_GT(t, 0.0);
  const std::vector<euler2d::State<double>> start = [&] {
    tessera::Executor executor;
    euler2d::EulerSolver<double, tessera::Strided> solver(memory(), executor, small_shock_bubble());
    return solver.gather();
  }();
  std::size_t changed = 0;
  for (std::size_t k = 0; k < cells.size(); ++k)
    if (std::fabs(cells[k].density() - start[k].density()) > 1e-3) ++changed;
  EXPECT_GT(changed, cells.size() / 10);
}

TENSOR_TEST_ON_DEVICES(Partitions);

}  // namespace
