#pragma once
// Hand-written OpenMP versions of the loops suite's chains, over the same padded arrays (x
// fastest, one-cell halo), with the same arithmetic in the same order.

#include <cstddef>

namespace loops_baseline {

bool have_openmp();
/// `iterations` of: u2 = Jacobi(u, f) on the interior, then u = u2 on the interior.
void jacobi_chain(double* u, double* u2, const double* f, int nx, int ny, int iterations, double dx, double dy);
/// `iterations` of: b = 7-point(a), then a = 7-point(b), on the interior.
void seven_point_chain(double* a, double* b, int n, int iterations);
/// STREAM's triad, a = b + s * c: the machine's sustainable memory bandwidth, 24 bytes an element.

}  // namespace loops_baseline
