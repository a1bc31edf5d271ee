// A user project: only find_package(tessera) and the installed headers.
#include <tessera/core/core.hpp>
#include <tessera/sched/executor.hpp>

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
  std::printf("consumer: sum of squares %ld (expected %ld), box volume %zu\n", total, expected, box.volume());
  return total == expected && box.volume() == 12 ? 0 : 1;
}
