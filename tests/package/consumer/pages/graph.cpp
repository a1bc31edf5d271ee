// DOC graph-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/graph.hpp>
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
  tessera::Executor executor;
  const long n = 32;
  tessera::TensorOptions<2> options;
  options.partitions = tessera::Extent<2>{1, 2};  // two slabs: one per device on sim:2
  options.with_padding(1);
  tessera::Tensor<double, 2> u(memory, {n, n}, tessera::TensorOptions<2>(options).named("u"));
  tessera::Tensor<double, 2> next(memory, {n, n}, tessera::TensorOptions<2>(options).named("next"));
  std::vector<double> want(n * n), tmp(n * n), plate(n * n);
  for (long k = 0; k < n * n; ++k) want[k] = static_cast<double>((k % n) * (k / n));
  u.fill_from(want.data());

  // Described once, run ten times: a node per block and operation, and halo nodes between the
  // slabs (the outer padding stays 0).
  auto diffuse = [] TESSERA_HOST_DEVICE(auto in, auto out) {
    *out = *in + 0.2 * (*in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1) - 4 * *in);
  };
  auto copy = [] TESSERA_HOST_DEVICE(auto from, auto to) { *to = *from; };
  tessera::ReductionResult<double> total;
  tessera::Graph step("diffuse");
  step.split(diffuse, tessera::concurrent_padded_access(u), next)
      .then_split(copy, tessera::read_only(next), u)
      .then_reduce(u, total, tessera::Sum{});
  step.run_n(executor, 10).get();
  u.gather_to(plate.data());

  // The same ten steps as plain loops.
  auto at = [&](long x, long y) { return x < 0 || y < 0 || x >= n || y >= n ? 0.0 : want[x + n * y]; };
  for (int s = 0; s < 10; ++s) {
    for (long y = 0; y < n; ++y)
      for (long x = 0; x < n; ++x)
        tmp[x + n * y] = at(x, y) + 0.2 * (at(x + 1, y) + at(x - 1, y) + at(x, y + 1) + at(x, y - 1) - 4 * at(x, y));
    want.swap(tmp);
  }
  double worst = 0, sum = 0;
  for (long k = 0; k < n * n; ++k) {
    worst = std::max(worst, std::fabs(plate[k] - want[k]));
    sum += want[k];
  }
  std::printf("graph: 10 passes, largest difference %g, total %.6f (expected %.6f)\n", worst, total.value(), sum);
  return worst < 1e-9 && std::fabs(total.value() - sum) < 1e-6 ? 0 : 1;
}
// DOC graph-page end
