// The example of docs/getting-started.md, word for word (docs.getting_started_example_matches),
// built by the package test against an installed prefix.
// DOC getting-started-heat begin
// heat.cpp: the heat equation on a square plate with insulated edges, explicitly in time, on
// whatever devices TESSERA_DEVICES names; then a small task graph that reports on the result.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;

  const std::size_t n = 128;
  tessera::TensorOptions<2> options;
  options.partitions = {1, devices.num_accelerators() > 0 ? devices.num_accelerators() : 1};
  options.with_padding(1);  // one halo cell: the stencil reads its four neighbours
  tessera::Tensor<double, 2, tessera::Strided> u(memory, {n, n}, tessera::TensorOptions<2>(options).named("u"));
  tessera::Tensor<double, 2, tessera::Strided> next(memory, {n, n}, tessera::TensorOptions<2>(options).named("next"));

  // A hot square in a cold plate.
  std::vector<double> start(n * n, 0.0);
  for (std::size_t y = 48; y < 80; ++y)
    for (std::size_t x = 48; x < 80; ++x) start[x + n * y] = 1.0;
  u.fill_from(start.data());

  // u_new = u + r (sum of the four neighbours - 4 u); r <= 1/4 keeps the scheme stable.
  const double r = 0.2;
  auto heat_step = [r](auto in, auto out) {
    *out = *in + r * (*in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1) - 4.0 * *in);
  };
  for (int step = 0; step < 200; ++step) {
    auto& from = step % 2 == 0 ? u : next;
    auto& to = step % 2 == 0 ? next : u;
    from.exchange_padding();                      // halos between partitions
    from.load_boundary(tessera::ZeroGradient{});  // insulated edges: no heat leaves
    tessera::for_each(executor, heat_step, tessera::read_only(from), tessera::write_only(to));
  }

  // A task graph: two summaries of the plate computed side by side, then a report after both.
  std::vector<double> plate(n * n);
  double total = 0, peak = 0;
  tessera::NodeGraph report("report");
  auto& gather = report.emplace([&] { u.gather_to(plate.data()); });
  auto& sum = report.emplace([&] {
    for (double v : plate) total += v;
  });
  auto& max = report.emplace([&] {
    for (double v : plate) peak = std::fmax(peak, v);
  });
  auto& print = report.emplace([&] {
    std::printf("heat: total %.12f (started at 1024), peak %.4f (started at 1)\n", total, peak);
  });
  gather.precede(sum);
  gather.precede(max);
  sum.precede(print);
  max.precede(print);
  executor.run(report).get();
  return std::fabs(total - 1024.0) < 1e-9 && peak < 1.0 && peak > 0.1 ? 0 : 1;
}
// DOC getting-started-heat end
