#pragma once
// OPS's Poisson test (apps/c/poisson in OP-DSL/OPS) on the loops front end, loop by loop:
// populate u, f and ref = sin(pi x) cos(2 pi y) over the grid and its one-cell halo, zero the
// interior of u, then Jacobi sweeps (a stencil loop into u2 and a copy back), then the summed
// squared error against ref. The halo keeps the exact boundary values. The kernels are
// TESSERA_HOST_DEVICE lambdas, so the nvcc build (tessera-poisson-cuda) runs them on CUDA devices.

#include <tessera/loops.hpp>

#include <cmath>
#include <numbers>

namespace poisson {

/// OPS's expected error for the default 20 x 20 grid and 10 iterations (OPS test.sh; the value
/// and the pass rule, relative 1e-5, are from ../shared/reference/poisson/expected.json).
inline constexpr double expected_error = 16.5173570176708;

struct Problem {
  int nx = 20, ny = 20, iterations = 10;
  double dx = 0.01, dy = 0.01;
};

namespace tl = tessera::loops;

inline double solve(tl::Context& context, const Problem& p) {
  tl::Block grid(context, 2, "poisson");
  const tl::Shape shape{.size = {p.nx, p.ny, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> u(grid, shape, "u"), u2(grid, shape, "u2"), f(grid, shape, "f"), ref(grid, shape, "ref");
  const tl::Stencil zero(2, {{0, 0, 0}}, "00");
  const tl::Stencil five(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "5pt");
  const tl::Range all = tl::Range::of(2, {-1, p.nx + 1, -1, p.ny + 1});
  const tl::Range interior = tl::Range::of(2, {0, p.nx, 0, p.ny});

  tl::par_loop(
      [] TESSERA_HOST_DEVICE(tl::Acc<double> uu, tl::Acc<double> ff, tl::Acc<double> rr, tl::Acc<double> uu2,
                             const double& dx, const double& dy, const int* idx) {
        constexpr double pi = std::numbers::pi;
        const double x = dx * idx[0], y = dy * idx[1];
        // OPS computes u through myfun(a, b) = a * b + 1, minus 1.
        uu(0, 0) = (std::sin(pi * x) * std::cos(2.0 * pi * y) + 1.0) - 1.0;
        ff(0, 0) = -5.0 * pi * pi * std::sin(pi * x) * std::cos(2.0 * pi * y);
        rr(0, 0) = std::sin(pi * x) * std::cos(2.0 * pi * y);
        uu2(0, 0) = uu(0, 0);
      },
      "populate", grid, all, tl::write(u, zero), tl::write(f, zero), tl::write(ref, zero), tl::write(u2, zero),
      tl::gbl(p.dx), tl::gbl(p.dy), tl::idx());
  tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<double> uu) { uu(0, 0) = 0.0; }, "initial guess", grid, interior,
               tl::write(u, zero));

  for (int it = 0; it < p.iterations; ++it) {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(tl::Acc<double> out, tl::Acc<const double> in, tl::Acc<const double> ff,
                               const double& dx, const double& dy) {
          out(0, 0) =
              ((in(-1, 0) + in(1, 0)) * dx * dx + (in(0, -1) + in(0, 1)) * dy * dy - dx * dx * dy * dy * ff(0, 0)) /
              (2.0 * (dx * dx + dy * dy));
        },
        "jacobi", grid, interior, tl::write(u2, zero), tl::read(u, five), tl::read(f, zero), tl::gbl(p.dx),
        tl::gbl(p.dy));
    tl::par_loop([] TESSERA_HOST_DEVICE(tl::Acc<double> out, tl::Acc<const double> in) { out(0, 0) = in(0, 0); },
                 "copy", grid, interior, tl::write(u, zero), tl::read(u2, zero));
  }

  tl::Reduction<double> err(context, tl::ReduceOp::inc, "err");
  tl::par_loop(
      [] TESSERA_HOST_DEVICE(tl::Acc<const double> uu, tl::Acc<const double> rr, double& e) {
        const double d = uu(0, 0) - rr(0, 0);
        e += d * d;
      },
      "error", grid, interior, tl::read(u, zero), tl::read(ref, zero), tl::reduce(err));
  return err.get();
}

/// OPS's pass rule: |100 (err / expected) - 100| < 0.001 (percent).
inline double percent_off(double err) { return std::fabs(100.0 * (err / expected_error) - 100.0); }

}  // namespace poisson
