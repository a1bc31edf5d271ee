// SAXPY, y = a * x + y, on tensors partitioned over the selected devices (Ripple Listing 7).
//
//   tessera-saxpy [N] [DEVICES] [PARTITIONS]      e.g. tessera-saxpy 100000000 sim:2 4
//   tessera-saxpy --size N --devices SPEC --partitions P   (the same, named; --help lists them)
//
// Without DEVICES the devices come from TESSERA_DEVICES (else the host).

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  std::size_t n = std::size_t{1} << 24;
  std::string spec;  // empty: TESSERA_DEVICES, else the host
  std::size_t partitions = 1;
  CLI::App app{
      "SAXPY, y = a * x + y, on tensors partitioned over the devices (Ripple Listing 7), every element checked",
      "tessera-saxpy"};
  tessera_app::add_standard_options(app);
  // Each is positional, as the app always took them, and named, so that --config can set it.
  app.add_option("size,--size", n, "floats in x and y")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 36));
  app.add_option("devices,--devices", spec,
                 "a device selection: host, sim:N[:SIZE], ... (default: TESSERA_DEVICES, else the host)")
      ->check(tessera_app::not_an_option);
  app.add_option("partitions,--partitions", partitions, "partitions of each tensor")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(1, 1 << 16));
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  tessera::DeviceSet devices = tessera::DeviceSet::select(tessera_app::device_selection(spec));

  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  tessera::TensorOptions<1> options;
  options.partitions = tessera::Extent<1>{partitions};
  tessera::Tensor<float, 1> x(memory, tessera::Extent<1>{n}, tessera::TensorOptions<1>(options).named("x"));
  tessera::Tensor<float, 1> y(memory, tessera::Extent<1>{n}, tessera::TensorOptions<1>(options).named("y"));

  std::vector<float> xs(n), ys(n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i % 1024);
    ys[i] = 1.0f;
  }
  x.fill_from(xs.data());
  y.fill_from(ys.data());

  const float a = 2.0f;
  const auto start = std::chrono::steady_clock::now();
  // x is only read: declared, its copies stay valid wherever the kernel runs.
  tessera::for_each(
      executor, [] TESSERA_HOST_DEVICE(auto xi, auto yi, float alpha) { *yi += alpha * *xi; }, tessera::read_only(x), y,
      a);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  y.gather_to(ys.data());
  for (std::size_t i = 0; i < n; ++i)
    if (ys[i] != a * xs[i] + 1.0f) {
      std::fprintf(stderr, "saxpy: y[%zu] = %g, expected %g\n", i, ys[i], a * xs[i] + 1.0f);
      return 1;
    }
  std::printf("saxpy: %zu floats on %s in %d partition(s): %.3f ms (first run, includes copies), results ok\n", n,
              devices.num_accelerators() == 0 ? "host" : devices.spec().c_str(), static_cast<int>(partitions),
              seconds * 1e3);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "saxpy: %s\n", e.what());
  return 2;
}
