// The D3Q19 model: weights, velocities and the mode matrix in Ludwig's order, checked from
// their definitions (isotropy of the lattice tensors, orthogonality of the modes).

#include "d3q19.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace lb;

TEST(D3Q19, WeightsSumToOneAndVelocitiesComeInOppositePairs) {
  double sum = 0;
  for (double w : wv) sum += w;
  EXPECT_NEAR(sum, 1.0, 1e-15);
  EXPECT_EQ(cv[0][0] * cv[0][0] + cv[0][1] * cv[0][1] + cv[0][2] * cv[0][2], 0);
  for (int p = 1; p < nvel; ++p) {
    const int c2 = cv[p][0] * cv[p][0] + cv[p][1] * cv[p][1] + cv[p][2] * cv[p][2];
    EXPECT_TRUE(c2 == 1 || c2 == 2) << "p " << p;
    EXPECT_DOUBLE_EQ(wv[p], c2 == 1 ? 2.0 / 36.0 : 1.0 / 36.0) << "p " << p;
    for (int a = 0; a < 3; ++a) EXPECT_EQ(cv[nvel - p][a], -cv[p][a]) << "p " << p << " is not reversed by 19 - p";
  }
}

TEST(D3Q19, LatticeTensorsAreIsotropicUpToFourthOrder) {
  for (int a = 0; a < 3; ++a) {
    double first = 0;
    for (int p = 0; p < nvel; ++p) first += wv[p] * cv[p][a];
    EXPECT_NEAR(first, 0.0, 1e-16);
    for (int b = 0; b < 3; ++b) {
      double second = 0, third = 0;
      for (int p = 0; p < nvel; ++p) second += wv[p] * cv[p][a] * cv[p][b];
      EXPECT_NEAR(second, a == b ? cs2 : 0.0, 1e-16) << a << b;
      for (int c = 0; c < 3; ++c) {
        third = 0;
        for (int p = 0; p < nvel; ++p) third += wv[p] * cv[p][a] * cv[p][b] * cv[p][c];
        EXPECT_NEAR(third, 0.0, 1e-16);
        for (int d = 0; d < 3; ++d) {
          double fourth = 0;
          for (int p = 0; p < nvel; ++p) fourth += wv[p] * cv[p][a] * cv[p][b] * cv[p][c] * cv[p][d];
          const double iso = cs2 * cs2 * ((a == b && c == d) + (a == c && b == d) + (a == d && b == c));
          EXPECT_NEAR(fourth, iso, 1e-16) << a << b << c << d;
        }
      }
    }
  }
}

TEST(D3Q19, ModesAreOrthogonalUnderTheWeightsWithLudwigsNormalisers) {
  for (int m = 0; m < nvel; ++m)
    for (int n = 0; n < nvel; ++n) {
      double dot = 0;
      for (int p = 0; p < nvel; ++p) dot += wv[p] * mode_matrix(m, p) * mode_matrix(n, p);
      EXPECT_NEAR(dot, m == n ? 1.0 / na[m] : 0.0, 1e-15) << "modes " << m << " and " << n;
    }
}

TEST(D3Q19, TheInverseMatrixRecoversPopulationsFromModes) {
  // mi[p][m] = w_p na[m] ma[m][p]: mode -> population and back is the identity.
  double f[nvel];
  for (int p = 0; p < nvel; ++p) f[p] = wv[p] * (1.0 + 0.01 * std::sin(p + 1.0));
  double mode[nvel] = {};
  for (int m = 0; m < nvel; ++m)
    for (int p = 0; p < nvel; ++p) mode[m] += mode_matrix(m, p) * f[p];
  for (int p = 0; p < nvel; ++p) {
    double back = 0;
    for (int m = 0; m < nvel; ++m) back += wv[p] * na[m] * mode_matrix(m, p) * mode[m];
    EXPECT_NEAR(back, f[p], 1e-15) << "p " << p;
  }
  // The hydrodynamic moments: density, momentum, stress less cs2 rho.
  double rho = 0, jx = 0, sxy = 0;
  for (int p = 0; p < nvel; ++p) {
    rho += f[p];
    jx += f[p] * cv[p][0];
    sxy += f[p] * cv[p][0] * cv[p][1];
  }
  EXPECT_NEAR(mode[0], rho, 1e-15);
  EXPECT_NEAR(mode[1], jx, 1e-15);
  EXPECT_NEAR(mode[5], sxy, 1e-15);
}

}  // namespace
