// SAXPY over 10^8 floats: a 1-D Tensor<float, 1> on the host through for_each against
// `omp parallel for simd` over two std::vectors. Values are dyadic (x in quarters, a = 0.5), so
// after the same number of calls both y's must be equal bit for bit.
#include "baselines.hpp"
#include "kernels.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <vector>

namespace tessera::bench {

void run_saxpy(Report& report, const Settings& s, StreamArrays& triad) {
  const std::size_t n = s.quick ? 20'000'000 : 100'000'000;
  const float a = 0.5f;
  Executor ex;
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);

  std::vector<float> xs(n), ys(n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i % 1024) * 0.25f;
    ys[i] = static_cast<float>(i % 7);
  }
  Tensor<float, 1> x(memory, Extent<1>{n}, TensorOptions<1>{}.named("x"));
  Tensor<float, 1> y(memory, Extent<1>{n}, TensorOptions<1>{}.named("y"));
  x.fill_from(xs.data());
  y.fill_from(ys.data());
  // The baseline's arrays, first touched by the baseline loop's own schedule.
  std::vector<float> bx(n), by(n);
  baseline::saxpy(bx.data(), xs.data(), 1.0f, n);  // bx = xs + 0
  baseline::saxpy(by.data(), ys.data(), 1.0f, n);
  xs = {};

  const auto r =
      Interleaved::run(s.rounds, {{"tessera",
                                   [&] {
                                     for_each(
                                         ex, [](auto xi, auto yi, float k) { *yi = k * *xi + *yi; }, x, y, a);
                                   }},
                                  {"openmp", [&] { baseline::saxpy(by.data(), bx.data(), a, n); }},
                                  {"stream-triad", [&] { triad.triad(); }}});
  const double bytes = 12.0 * static_cast<double>(n);  // read x, read y, write y
  const std::string name = "saxpy-" + std::to_string(n);
  report_pair(report, name, r, "tessera", "openmp", bytes);
  report_vs_stream(report, name, r, "openmp", bytes, triad.triad_bytes());
  report_vs_stream(report, name, r, "tessera", bytes, triad.triad_bytes());

  std::vector<float> got(n);
  y.gather_to(got.data());
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != by[i]) {
      mismatch(name + ": y[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", the OpenMP loop gave " +
               std::to_string(by[i]));
      break;
    }
}

}  // namespace tessera::bench
