#pragma once
// The D3Q19 lattice in Ludwig's ordering (velocities, weights, mode matrix), so that the
// regression against Ludwig's logs sees the same populations in the same slots. cv[19 - p] is
// the reverse of cv[p] for p = 1..18, which bounce-back uses.
//
// Modes (rows of ma): density, momentum (3), the second moment less its trace cs2 (6: xx, xy,
// xz, yy, yz, zz), then nine ghost modes. With the weights they are orthogonal:
// sum_p w_p ma[m][p] ma[n][p] = delta_mn / na[m]. tests/lb/test_d3q19.cpp checks it.

#include <tessera/core/host_device.hpp>

namespace lb {

inline constexpr int nvel = 19;
inline constexpr int nhydro = 10;

inline constexpr int cv[nvel][3] = {{0, 0, 0},  {1, 1, 0},  {1, 0, 1},  {1, 0, 0},   {1, 0, -1},
                                    {1, -1, 0}, {0, 1, 1},  {0, 1, 0},  {0, 1, -1},  {0, 0, 1},
                                    {0, 0, -1}, {0, -1, 1}, {0, -1, 0}, {0, -1, -1}, {-1, 1, 0},
                                    {-1, 0, 1}, {-1, 0, 0}, {-1, 0, -1}, {-1, -1, 0}};

inline constexpr double w0 = 12.0 / 36.0;
inline constexpr double w1 = 2.0 / 36.0;
inline constexpr double w2 = 1.0 / 36.0;
inline constexpr double wv[nvel] = {w0, w2, w2, w1, w2, w2, w2, w1, w2, w1, w1, w2, w1, w2, w2, w2, w1, w2, w2};

inline constexpr double cs2 = 1.0 / 3.0;
inline constexpr double rcs2 = 3.0;

/// q[p][a][b] = c_pa c_pb - cs2 delta_ab: the second-moment weights of population p.
TESSERA_HOST_DEVICE constexpr double qab(int p, int a, int b) { return cv[p][a] * cv[p][b] - (a == b ? 1.0 / 3.0 : 0.0); }

/// The mode matrix ma[m][p].
TESSERA_HOST_DEVICE constexpr double mode_matrix(int m, int p) {
  const int cx = cv[p][0], cy = cv[p][1], cz = cv[p][2];
  const int c2 = cx * cx + cy * cy + cz * cz;
  const double chi1 = (2.0 * c2 - 3.0) * (3.0 * cz * cz - c2);
  const double chi2 = (2.0 * c2 - 3.0) * (cy * cy - cx * cx);
  switch (m) {
    case 0: return 1.0;
    case 1: return cx;
    case 2: return cy;
    case 3: return cz;
    case 4: return qab(p, 0, 0);
    case 5: return qab(p, 0, 1);
    case 6: return qab(p, 0, 2);
    case 7: return qab(p, 1, 1);
    case 8: return qab(p, 1, 2);
    case 9: return qab(p, 2, 2);
    case 10: return chi1;
    case 11: return chi1 * cx;
    case 12: return chi1 * cy;
    case 13: return chi1 * cz;
    case 14: return chi2;
    case 15: return chi2 * cx;
    case 16: return chi2 * cy;
    case 17: return chi2 * cz;
    default: return 3.0 * c2 * c2 - 6.0 * c2 + 1.0;
  }
}

/// The normalisers: sum_p w_p ma[m][p]^2 = 1 / na[m].
inline constexpr double na[nvel] = {1.0, 3.0, 3.0, 3.0, 4.5, 9.0, 9.0, 4.5, 9.0, 4.5,
                                    0.75, 1.5, 1.5, 1.5, 2.25, 4.5, 4.5, 4.5, 0.5};

}  // namespace lb
