// DOC executor-page begin
#include <tessera/sched/executor.hpp>
#include <tessera/sched/node_graph.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

int main() {
  tessera::Executor ex;  // the process's one pool of workers
  std::vector<double> x(100'000);
  double sum = 0.0;

  tessera::NodeGraph g("sum of squares");
  auto& fill = g.emplace([&] { ex.parallel_for(0, x.size(), [&](std::size_t i) { x[i] = static_cast<double>(i); }); });
  auto add_square = [&](std::size_t i, double& acc) { acc += x[i] * x[i]; };
  auto& reduce = g.emplace([&] { sum = ex.parallel_reduce(0, x.size(), 0.0, add_square, std::plus<>{}); });
  fill.precede(reduce);
  ex.run_n(g, 3).get();  // built once, run three times

  // Every partial sum is an integer below 2^53, so the parallel sum is exact in any order.
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const double expected = static_cast<double>((n - 1) * n * (2 * n - 1) / 6);
  std::printf("executor: sum of squares %.0f (expected %.0f)\n", sum, expected);
  return sum == expected ? 0 : 1;
}
// DOC executor-page end
