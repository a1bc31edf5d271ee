// OPS's Poisson test on the loops front end: the error after 10 Jacobi iterations on 20 x 20 is
// OPS's (16.5173570176708, ../shared/reference/poisson/expected.json, relative 1e-5), and equals
// bit for bit a plain sequential loop nest of the same arithmetic, on host, sim:1 and sim:4.
#include "poisson.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include "../support/backends.hpp"

#include <cmath>
#include <numbers>
#include <vector>

namespace {

// The same problem written as plain loops over padded arrays (index (i + 1) + (j + 1) * (nx + 2)).
double sequential_poisson(const poisson::Problem& p) {
  const int w = p.nx + 2, h = p.ny + 2;
  std::vector<double> u(w * h), u2(w * h), f(w * h), ref(w * h);
  auto at = [w](int i, int j) { return (i + 1) + (j + 1) * w; };
  constexpr double pi = std::numbers::pi;
  for (int j = -1; j <= p.ny; ++j)
    for (int i = -1; i <= p.nx; ++i) {
      const double x = p.dx * i, y = p.dy * j;
      u[at(i, j)] = (std::sin(pi * x) * std::cos(2.0 * pi * y) + 1.0) - 1.0;
      f[at(i, j)] = -5.0 * pi * pi * std::sin(pi * x) * std::cos(2.0 * pi * y);
      ref[at(i, j)] = std::sin(pi * x) * std::cos(2.0 * pi * y);
      u2[at(i, j)] = u[at(i, j)];
    }
  for (int j = 0; j < p.ny; ++j)
    for (int i = 0; i < p.nx; ++i) u[at(i, j)] = 0.0;
  const double dx = p.dx, dy = p.dy;
  for (int it = 0; it < p.iterations; ++it) {
    for (int j = 0; j < p.ny; ++j)
      for (int i = 0; i < p.nx; ++i)
        u2[at(i, j)] = ((u[at(i - 1, j)] + u[at(i + 1, j)]) * dx * dx + (u[at(i, j - 1)] + u[at(i, j + 1)]) * dy * dy -
                        dx * dx * dy * dy * f[at(i, j)]) /
                       (2.0 * (dx * dx + dy * dy));
    for (int j = 0; j < p.ny; ++j)
      for (int i = 0; i < p.nx; ++i) u[at(i, j)] = u2[at(i, j)];
  }
  // The loops front end's reduction order: sites along each row, then the rows in order.
  double err = 0;
  for (int j = 0; j < p.ny; ++j) {
    double row = 0;
    for (int i = 0; i < p.nx; ++i) {
      const double d = u[at(i, j)] - ref[at(i, j)];
      row += d * d;
    }
    err += row;
  }
  return err;
}

class Poisson : public ::testing::TestWithParam<std::string> {};

TEST_P(Poisson, MatchesOpsExpectedErrorAndThePlainLoopBitForBit) {
  auto devices = tessera::DeviceSet::select(GetParam());
  tessera::Executor executor;
  tessera::loops::Context context(devices, executor);
  const poisson::Problem p;
  const double err = poisson::solve(context, p);
  EXPECT_LT(poisson::percent_off(err), 0.001) << err;
  EXPECT_EQ(err, sequential_poisson(p));
  EXPECT_EQ(context.pending(), 0u);
  EXPECT_EQ(context.executed(), 2u + 2u * p.iterations + 1u);
}

TEST_P(Poisson, LargerAndOddGridsMatchThePlainLoop) {
  auto devices = tessera::DeviceSet::select(GetParam());
  tessera::Executor executor;
  tessera::loops::Context context(devices, executor);
  const poisson::Problem p{.nx = 37, .ny = 53, .iterations = 25};
  EXPECT_EQ(poisson::solve(context, p), sequential_poisson(p));
}

INSTANTIATE_TEST_SUITE_P(Backends, Poisson, ::testing::ValuesIn(test_backends::spec_strings),
                         [](const auto& p) { return test_backends::name(p.param); });

}  // namespace
