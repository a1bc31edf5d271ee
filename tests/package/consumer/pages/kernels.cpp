// DOC kernels-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);
  tessera::Executor ex;
  const long nx = 64, ny = 32;
  tessera::TensorOptions<2> options;
  options.partitions = {1, 2};  // split along y: one slab per device on sim:2
  options.with_padding(1);
  tessera::Tensor<double, 2, tessera::Strided> u(memory, {nx, ny}, tessera::TensorOptions<2>(options).named("u"));
  tessera::Tensor<double, 2, tessera::Strided> du(memory, {nx, ny}, tessera::TensorOptions<2>(options).named("du"));

  std::vector<double> values(nx * ny), result(nx * ny);
  for (long k = 0; k < nx * ny; ++k) values[k] = std::sin(0.1 * (k % nx)) * (k / nx);
  u.fill_from(values.data());
  u.exchange_padding();                      // halos between the two partitions
  u.load_boundary(tessera::ZeroGradient{});  // and at the domain's edges
  tessera::for_each(
      ex,
      [] TESSERA_HOST_DEVICE(auto in, auto out) {
        double sum = 0;
        tessera::unrolled_for<decltype(in)::dims>([&](auto d) { sum += 0.5 * (*in.offset(d, 1) - *in.offset(d, -1)); });
        *out = sum;
      },
      tessera::read_only(u), tessera::write_only(du));
  tessera::ReductionResult<double> total;
  tessera::reduce(ex, du, total, tessera::Sum{});
  du.gather_to(result.data());

  // The same stencil as a plain loop, its zero-gradient edges as clamped indices.
  auto at = [&](long x, long y) { return values[std::clamp(x, 0L, nx - 1) + nx * std::clamp(y, 0L, ny - 1)]; };
  double worst = 0, sum = 0;
  for (long y = 0; y < ny; ++y)
    for (long x = 0; x < nx; ++x) {
      const double want = 0.5 * (at(x + 1, y) - at(x - 1, y)) + 0.5 * (at(x, y + 1) - at(x, y - 1));
      worst = std::max(worst, std::fabs(result[x + nx * y] - want));
      sum += want;
    }
  std::printf("kernels: largest difference %g, sum %.9f (expected %.9f)\n", worst, total.value(), sum);
  return worst < 1e-12 && std::fabs(total.value() - sum) < 1e-9 ? 0 : 1;
}
// DOC kernels-page end
