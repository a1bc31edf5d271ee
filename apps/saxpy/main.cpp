// SAXPY, y = a * x + y, on tensors partitioned over the selected devices (Ripple Listing 7).
//
//   tessera-saxpy [N] [DEVICES] [PARTITIONS]      e.g. tessera-saxpy 100000000 sim:2 4

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  const std::size_t n = argc > 1 ? std::stoull(argv[1]) : std::size_t{1} << 24;
  tessera::DeviceSet devices = tessera::DeviceSet::select(argc > 2 ? argv[2] : "host");
  const std::size_t partitions = argc > 3 ? std::stoull(argv[3]) : 1;

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
  tessera::for_each(executor, [] TESSERA_HOST_DEVICE(auto xi, auto yi, float alpha) { *yi += alpha * *xi; },
                    tessera::read_only(x), y, a);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  y.gather_to(ys.data());
  for (std::size_t i = 0; i < n; ++i)
    if (ys[i] != a * xs[i] + 1.0f) {
      std::fprintf(stderr, "saxpy: y[%zu] = %g, expected %g\n", i, ys[i], a * xs[i] + 1.0f);
      return 1;
    }
  std::printf("saxpy: %zu floats on %s in %d partition(s): %.3f ms (first run, includes copies), results ok\n", n,
              (argc > 2 ? argv[2] : "host"), static_cast<int>(partitions), seconds * 1e3);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "saxpy: %s\n", e.what());
  return 2;
}
