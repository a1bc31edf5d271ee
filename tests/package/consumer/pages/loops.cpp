// DOC loops-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <cstdio>

namespace tl = tessera::loops;

int main() {
  auto devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::Executor executor;
  tl::Context context(devices, executor);

  const int n = 100;
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> u(grid, shape, "u"), lap(grid, shape, "lap");
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const tl::Range with_halo = tl::Range::of(2, {-1, n + 1, -1, n + 1}), interior = tl::Range::of(2, {0, n, 0, n});

  // u = x^2 + y^2, halo included, so the five-point Laplacian is exactly 4 at every interior site.
  tl::par_loop([](tl::Acc<double> v, const int* idx) { v(0, 0) = idx[0] * idx[0] + idx[1] * idx[1]; }, "init", grid,
               with_halo, tl::write(u, site), tl::idx());
  tl::par_loop(
      [](tl::Acc<double> out, tl::Acc<const double> in) {
        out(0, 0) = in(1, 0) + in(-1, 0) + in(0, 1) + in(0, -1) - 4.0 * in(0, 0);
      },
      "laplacian", grid, interior, tl::write(lap, site), tl::read(u, cross));
  tl::Reduction<double> total(context, tl::ReduceOp::inc, "total"), lowest(context, tl::ReduceOp::min, "lowest");
  tl::par_loop(
      [](tl::Acc<const double> v, double& sum, double& min) {
        sum += v(0, 0);
        min = std::min(min, v(0, 0));
      },
      "check", grid, interior, tl::read(lap, site), tl::reduce(total), tl::reduce(lowest));
  const double sum = total.get(), min = lowest.get();  // the first get() runs the three recorded loops

  std::printf("loops: Laplacian summed %.1f (expected %.1f), lowest %.1f (expected 4)\n", sum, 4.0 * n * n, min);
  return sum == 4.0 * n * n && min == 4.0 ? 0 : 1;
}
// DOC loops-page end
