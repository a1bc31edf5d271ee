// The examples of docs/executor.md, compiled and checked here so the docs cannot rot.
// Keep the text between the DOC markers identical to the docs.
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <vector>

TEST(DocExamples, Executor) {
  // DOC executor-example begin
  tessera::Executor ex;  // GPU-priority workers = devices + 1, CPU-priority = the other cores

  std::vector<double> x(1'000'000), y(x.size());
  double norm = 0.0;

  tessera::NodeGraph g("normalise");
  auto& fill = g.emplace([&] {
    ex.parallel_for(0, x.size(), [&](std::size_t i) { x[i] = std::sin(0.001 * double(i)); });
  }).name("fill");
  auto& reduce = g.emplace([&] {
    norm = std::sqrt(ex.parallel_reduce(0, x.size(), 0.0,
                                        [&](std::size_t i, double& acc) { acc += x[i] * x[i]; },
                                        std::plus<>{}));
  }).name("norm");
  auto& scale = g.emplace([&](double factor) {
    ex.parallel_for(0, x.size(), [&](std::size_t i) { y[i] = factor * x[i] / norm; });
  }, 2.0).name("scale");  // bound argument: factor = 2.0
  fill.precede(reduce);
  reduce.precede(scale);

  ex.run_n(g, 3).get();            // built once, run many times
  int more = 0;
  ex.run_until(g, [&] { return ++more > 2; }).get();
  std::ofstream("normalise.dot") << g.to_dot();
  // DOC executor-example end

  double check = 0.0;
  for (double v : y) check += v * v;
  EXPECT_NEAR(std::sqrt(check), 2.0, 1e-9);
}

TEST(DocExamples, Trace) {
  tessera::Executor ex;
  tessera::NodeGraph g("traced");
  g.emplace([] {}).name("a").precede(g.emplace([] {}).name("b"));
  // DOC trace-example begin
  ex.start_trace();
  ex.run_n(g, 10).get();
  tessera::Trace trace = ex.stop_trace();
  trace.save("run.trace.json");  // open in ui.perfetto.dev: a track per worker
  // DOC trace-example end
  EXPECT_EQ(trace.events.size(), 20u);
}
