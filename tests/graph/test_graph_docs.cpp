// The examples of docs/graph.md, run as tests (the docs test checks they appear there verbatim).

// The one include docs/graph.md names, alone, so the page's examples compile as shown.
#include <tessera/tessera.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <vector>

namespace {

TEST(GraphDocs, StencilWithHalosAndAReduction) {
  // DOC graph-stencil begin
  tessera::DeviceSet devices = tessera::DeviceSet::select("sim:2:64MiB");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;

  tessera::TensorOptions<2> with_halo;
  with_halo.partitions = tessera::Extent<2>{1, 2};  // one slab per device
  with_halo.with_padding(1).named("u");
  tessera::Tensor<double, 2> u(memory, {64, 64}, with_halo);
  tessera::TensorOptions<2> plain = with_halo;
  plain.padding = tessera::Index<2>{};
  tessera::Tensor<double, 2> lap(memory, {64, 64}, plain.named("lap"));
  tessera::ReductionResult<double> total;

  tessera::Graph g("laplacian");
  g.split([] TESSERA_HOST_DEVICE(auto it) { *it = static_cast<double>(it.global_idx(1)); }, u)
      .then_split([] TESSERA_HOST_DEVICE(auto in, auto out) {
        *out = *in.offset(0, 1) + *in.offset(0, -1) + *in.offset(1, 1) + *in.offset(1, -1) - 4 * *in;
      }, tessera::concurrent_padded_access(u), lap)
      .named("laplacian")
      .then_reduce(lap, total, tessera::Sum{});
  g.run(executor).get();
  // DOC graph-stencil end
  ASSERT_TRUE(total.is_complete());
  // u = y is linear, so the Laplacian is 0 except next to the zero outer padding: columns
  // x = 0 and x = 63 lose y per cell (-2 * 2016 in all), row y = 0 gains 1 per cell (its lower
  // neighbour is 0 where y would be -1) and row y = 63 loses 64 per cell.
  EXPECT_EQ(total.value(), -2.0 * 2016.0 + 64.0 - 64.0 * 64.0);
  EXPECT_EQ(g.count(tessera::GraphNodeRole::halo), 2u);
  EXPECT_NE(g.find("laplacian [b1]"), nullptr);
}

TEST(GraphDocs, StarStencilExchangesFacesOnly) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  // DOC graph-star begin
  tessera::TensorOptions<3> o;
  o.partitions = tessera::Extent<3>{2, 2, 2};
  o.with_padding(1).periodic = {true, true, true};
  tessera::Tensor<double, 3> u(memory, {16, 16, 16}, o.named("u")), v(memory, {16, 16, 16}, o.named("v"));

  // A 7-point average reads its neighbours along the axes only: a star stencil, whose halo is
  // each block's 6 faces (48 copies here) rather than its 26 neighbours (208).
  auto average = [] TESSERA_HOST_DEVICE(auto in, auto out) {
    *out = (*in + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1) + *in.offset(2, -1) +
            *in.offset(2, 1)) /
           7.0;
  };
  tessera::Graph g("jacobi");
  g.split([] TESSERA_HOST_DEVICE(auto it) { *it = static_cast<double>(it.global_idx(0) % 3); }, u)
      .then_split(average, tessera::concurrent_padded_access(u, tessera::StencilShape::star()), v);
  g.run(executor).get();
  // DOC graph-star end
  EXPECT_EQ(g.count(tessera::GraphNodeRole::halo), 48u);
  std::vector<double> got(16 * 16 * 16);
  v.gather_to(got.data());
  auto f = [](std::int64_t x) { return static_cast<double>(((x % 16 + 16) % 16) % 3); };
  for (std::int64_t z = 0; z < 16; ++z)
    for (std::int64_t y = 0; y < 16; ++y)
      for (std::int64_t x = 0; x < 16; ++x) {
        // u varies along x only, so its y and z neighbours (wrapped too) equal the centre.
        const double c = f(x), want = (c + f(x - 1) + f(x + 1) + c + c + c + c) / 7.0;
        ASSERT_EQ(got[static_cast<std::size_t>(x + 16 * (y + 16 * z))], want) << x << "," << y << "," << z;
      }
}

TEST(GraphDocs, ConditionalMapReduce) {
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  // DOC graph-conditional begin
  tessera::TensorOptions<1> o;
  o.partitions = tessera::Extent<1>{4};
  tessera::Tensor<double, 1> x(memory, tessera::Extent<1>{1000}, o.named("x"));
  tessera::ReductionResult<double> sum;

  tessera::Graph init("init"), step("map reduce");
  init.split([] TESSERA_HOST_DEVICE(auto it) { *it = 4.0; }, x);
  step.split([] TESSERA_HOST_DEVICE(auto it) { *it -= 1.0; }, x)
      .then_reduce(x, sum, tessera::Sum{})
      .conditional([&sum] { return sum.value() != 0.0; });  // checked after each pass
  init.then(step);  // init once, then the loop
  init.run(executor).get();
  // DOC graph-conditional end
  EXPECT_EQ(sum.value(), 0.0);
  EXPECT_EQ(init.num_passes(), 2u);
}

TEST(GraphDocs, DotExport) {
  tessera::Graph g("dot");
  g.emplace([] {}).named("load").then([] {}).named("solve");
  // DOC graph-dot begin
  std::ofstream("graph.dot") << g.to_dot();  // dot -Tsvg graph.dot > graph.svg
  // DOC graph-dot end
  std::ifstream in("graph.dot");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"load\""), std::string::npos);
}

}  // namespace
