// A user project: only find_package(tessera) and the installed headers, through the one include.
#include <tessera/tessera.hpp>

#include <cstdio>
#include <vector>

int main() {
  tessera::Executor ex;
  tessera::NodeGraph g("consumer");
  std::vector<long> squares(100);
  long total = 0;
  auto& fill = g.emplace([&] { ex.parallel_for(0, squares.size(), [&](std::size_t i) { squares[i] = long(i * i); }); });
  auto& sum = g.emplace([&] { for (long s : squares) total += s; });
  fill.precede(sum);
  ex.run(g).get();
  tessera::Box<2> box{tessera::Index{0, 0}, tessera::Index{3, 4}};
  const long expected = 99L * 100 * 199 / 6;

  // A kernel over a tensor, on the host.
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Tensor<double, 2, tessera::Strided> u(memory, {64, 32});
  tessera::for_each(ex, [](auto x) { *x = 2.0; }, u);
  std::vector<double> back(64 * 32);
  u.gather_to(back.data());
  double u_sum = 0;
  for (double v : back) u_sum += v;

  std::printf("consumer: sum of squares %ld (expected %ld), box volume %zu, tensor sum %g (expected 4096)\n", total,
              expected, box.volume(), u_sum);
  return total == expected && box.volume() == 12 && u_sum == 4096.0 ? 0 : 1;
}
