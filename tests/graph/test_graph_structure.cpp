// Graph structure against Ripple's figures: which nodes each operation makes and which edges
// join them (figures 2, 3, 4, 7 and 9), subgraph joins, passes and DOT.

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>

#include "../tensor/tensor_test_support.hpp"

namespace {

using namespace tessera;

bool has_edge(const Node* from, const Node* to) {
  for (const Node* s : from->successors())
    if (s == to) return true;
  return false;
}

Node& node(const Graph& g, const std::string& name) {
  Node* n = g.find(name);
  if (n == nullptr) throw std::runtime_error("no node named '" + name + "'\n" + g.to_dot());
  return *n;
}

auto no_op = [] TESSERA_HOST_DEVICE(auto it) { *it = *it; };

// Figure 2: A; then B, C, D beside each other; then E after all three.
TEST(GraphStructure, EmplaceAndThenMakeLevels) {
  Graph g("figure 2");
  g.emplace([] {}).named("A").then([] {}).named("B").emplace([] {}).named("C").emplace([] {}).named("D").then([] {}).named("E");
  ASSERT_EQ(g.size(), 5u);
  for (const char* mid : {"B", "C", "D"}) {
    EXPECT_TRUE(has_edge(&node(g, "A"), &node(g, mid))) << mid;
    EXPECT_TRUE(has_edge(&node(g, mid), &node(g, "E"))) << mid;
    EXPECT_EQ(node(g, mid).num_predecessors(), 1u);
  }
  EXPECT_EQ(node(g, "E").num_predecessors(), 3u);
}

// make_node: several callables in one call, all in the same level.
TEST(GraphStructure, MakeNodeAddsSeveralNodesAtOnce) {
  int a = 0, b = 0, c = 0;
  Graph g("make_node");
  g.emplace([] {}).named("root").then(make_node([&a](int x) { a = x; }, 1), make_node([&b] { b = 2; })).then([&] {
    c = a + b;
  }).named("sum");
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(node(g, "sum").num_predecessors(), 2u);
  EXPECT_EQ(node(g, "root").successors().size(), 2u);
  Executor ex;
  g.run(ex).get();
  EXPECT_EQ(c, 3);
}

// Figure 3: two plain nodes, then a split over 4 partitions: each split node waits for both.
TEST(GraphStructure, ThenSplitAfterPlainNodesWaitsForAll) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> o;
  o.partitions = Extent<1>{4};
  Tensor<double, 1> x(memory, Extent<1>{64}, o.named("x"));
  Graph g("figure 3");
  g.emplace([] {}).named("A").emplace([] {}).named("B").then_split(no_op, x).named("S");
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g.count(GraphNodeRole::split), 4u);
  for (int b = 0; b < 4; ++b) {
    Node& s = node(g, "S [b" + std::to_string(b) + "]");
    EXPECT_EQ(s.num_predecessors(), 2u);
    EXPECT_TRUE(has_edge(&node(g, "A"), &s));
    EXPECT_TRUE(has_edge(&node(g, "B"), &s));
  }
}

// Figure 4: split, then_reduce: R_b waits for S_b only; F waits for every R_b.
TEST(GraphStructure, ThenReduceJoinsSamePartitions) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> o;
  o.partitions = Extent<1>{4};
  Tensor<double, 1> x(memory, Extent<1>{64}, o.named("x"));
  ReductionResult<double> sum;
  Graph g("figure 4");
  g.split(no_op, x).named("S").then_reduce(x, sum, Sum{}).named("R");
  ASSERT_EQ(g.size(), 9u);
  EXPECT_EQ(g.count(GraphNodeRole::reduce_partial), 4u);
  EXPECT_EQ(g.count(GraphNodeRole::reduce_final), 1u);
  Node& f = node(g, "R final");
  EXPECT_EQ(f.num_predecessors(), 4u);
  for (int b = 0; b < 4; ++b) {
    Node& r = node(g, "R [b" + std::to_string(b) + "]");
    EXPECT_EQ(r.num_predecessors(), 1u);
    EXPECT_TRUE(has_edge(&node(g, "S [b" + std::to_string(b) + "]"), &r));
    EXPECT_TRUE(has_edge(&r, &f));
  }
}

// then_split after a split over the same partitioning: same-block edges only; over another
// partitioning: every block waits for every block.
TEST(GraphStructure, ThenSplitMatchesBlocksOnlyForTheSamePartitioning) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> four, two;
  four.partitions = Extent<1>{4};
  two.partitions = Extent<1>{2};
  Tensor<double, 1> x(memory, Extent<1>{64}, four.named("x"));
  Tensor<double, 1> y(memory, Extent<1>{64}, four.named("y"));
  Tensor<double, 1> z(memory, Extent<1>{64}, two.named("z"));
  Graph g("matching");
  g.split(no_op, x).named("X").then_split(no_op, y).named("Y").then_split(no_op, z).named("Z");
  for (int b = 0; b < 4; ++b) EXPECT_EQ(node(g, "Y [b" + std::to_string(b) + "]").num_predecessors(), 1u);
  for (int b = 0; b < 2; ++b) EXPECT_EQ(node(g, "Z [b" + std::to_string(b) + "]").num_predecessors(), 4u);
}

// Figure 7 (concurrent) and figure 9 (exclusive): a tensor over 4 devices, cut along y so
// that halos are whole rows copied device to device.
TEST(GraphStructure, PaddedAccessInsertsHaloNodesAndExclusiveEdges) {
  DeviceSet devices = DeviceSet::select("sim:4:16MiB");
  MemoryManager memory(devices);
  TensorOptions<2> o;
  o.partitions = Extent<2>{1, 4};
  o.padding = Index<2>{0, 1};
  Tensor<double, 2> x(memory, Extent<2>{8, 64}, o.named("x"));
  TensorOptions<2> plain = o;
  plain.padding = Index<2>{};
  Tensor<double, 2> y(memory, Extent<2>{8, 64}, plain.named("y"));
  auto diff = [] TESSERA_HOST_DEVICE(auto in, auto out) { *out = *in.offset(1, 1) - *in.offset(1, -1); };
  auto smooth = [] TESSERA_HOST_DEVICE(auto u) { *u = *u.offset(1, 1) - *u.offset(1, -1); };

  Graph concurrent("figure 7");
  concurrent.split(no_op, x).named("a").then_split(diff, concurrent_padded_access(x), y).named("s");
  // Interior boundaries 0|1, 1|2, 2|3, each copied both ways.
  EXPECT_EQ(concurrent.count(GraphNodeRole::halo), 6u);
  for (int b = 0; b < 4; ++b) {
    Node& s = node(concurrent, "s [b" + std::to_string(b) + "]");
    const std::size_t neighbours = (b == 0 || b == 3) ? 1 : 2;
    EXPECT_EQ(s.num_predecessors(), 1 + neighbours) << "the previous node of its block and the halos into it";
    EXPECT_EQ(s.kind(), ExecKind::gpu);
  }
  Node& h01 = node(concurrent, "s halo 0->1");
  EXPECT_TRUE(has_edge(&node(concurrent, "a [b0]"), &h01));
  EXPECT_TRUE(has_edge(&node(concurrent, "a [b1]"), &h01));
  EXPECT_TRUE(has_edge(&h01, &node(concurrent, "s [b1]")));
  EXPECT_FALSE(has_edge(&h01, &node(concurrent, "s [b0]"))) << "concurrent: the source's kernel may overlap the copy";

  Graph exclusive("figure 9");
  exclusive.split(no_op, x).named("a").then_split(smooth, exclusive_padded_access(x)).named("s");
  EXPECT_EQ(exclusive.count(GraphNodeRole::halo), 6u);
  Node& e01 = node(exclusive, "s halo 0->1");
  EXPECT_TRUE(has_edge(&e01, &node(exclusive, "s [b1]")));
  EXPECT_TRUE(has_edge(&e01, &node(exclusive, "s [b0]"))) << "exclusive: block 0 is written only after it was copied";
  EXPECT_EQ(node(exclusive, "s [b1]").num_predecessors(), 1u + 2u + 2u);

  // Staged in shared memory, the same edges: a concurrent kernel's stages are read only (never
  // written back), an exclusive kernel's are written back.
  Graph staged("figures 7 and 9, in_shared");
  staged.split(no_op, x).named("a").then_split(diff, concurrent_padded_access_in_shared(x), y).named("c");
  staged.then_split(smooth, exclusive_padded_access_in_shared(x)).named("e");
  Node& c01 = node(staged, "c halo 0->1");
  EXPECT_TRUE(has_edge(&c01, &node(staged, "c [b1]")));
  EXPECT_FALSE(has_edge(&c01, &node(staged, "c [b0]"))) << "concurrent in_shared: the kernel only reads block 0";
  Node& x01 = node(staged, "e halo 0->1");
  EXPECT_TRUE(has_edge(&x01, &node(staged, "e [b0]"))) << "exclusive in_shared: block 0 is written back";
}

// Halos staged through the host (here: 1-D, on the host) take host holds on both blocks: they
// run one after another and before the source block's kernel, even for concurrent access.
TEST(GraphStructure, HostStagedHalosAreSerialised) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  o.with_padding(1);
  Tensor<double, 1> x(memory, Extent<1>{30}, o.named("x"));
  TensorOptions<1> plain = o;
  plain.padding = Index<1>{};
  Tensor<double, 1> y(memory, Extent<1>{30}, plain.named("y"));
  Graph g("host halos");
  g.split([] TESSERA_HOST_DEVICE(auto in, auto out) { *out = *in.offset(0, -1); }, concurrent_padded_access(x), y)
      .named("s");
  // halo_transfers() orders by destination, then source: 1->0, 0->1, 2->1, 1->2.
  const char* chain[] = {"s halo 1->0", "s halo 0->1", "s halo 2->1", "s halo 1->2"};
  for (int k = 0; k + 1 < 4; ++k) EXPECT_TRUE(has_edge(&node(g, chain[k]), &node(g, chain[k + 1]))) << chain[k];
  EXPECT_TRUE(has_edge(&node(g, "s halo 0->1"), &node(g, "s [b0]")));
  EXPECT_TRUE(has_edge(&node(g, "s halo 1->0"), &node(g, "s [b0]")));
}

// A 2-D tensor over 2x2 partitions: faces and corners, 12 halo copies (Ripple §5.4.1: 8
// neighbours per interior partition in 2-D; here every partition has 3). Read through a star
// stencil, the 4 corner copies are gone; along x, only the 4 copies across the x cut remain.
TEST(GraphStructure, TwoDimensionalHalosIncludeCornersUnlessTheStencilIsAStar) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<2> o;
  o.partitions = Extent<2>{2, 2};
  o.with_padding(1);
  Tensor<float, 2> u(memory, Extent<2>{16, 16}, o.named("u"));
  Graph g("2d");
  Tensor<float, 2> out(memory, Extent<2>{16, 16}, o.named("out"));
  // Concurrent padded access is read-only: its views do not take writes.
  g.split([] TESSERA_HOST_DEVICE(auto it, auto r) { *r = *it.offset(0, 1).offset(1, 1); }, concurrent_padded_access(u),
          out);
  EXPECT_EQ(g.count(GraphNodeRole::halo), 12u);

  auto cross = [] TESSERA_HOST_DEVICE(auto it, auto r) { *r = *it.offset(0, 1) + *it.offset(1, -1); };
  Graph star("star");
  star.split(cross, concurrent_padded_access(u, StencilShape::star()), out);
  EXPECT_EQ(star.count(GraphNodeRole::halo), 8u);
  Graph along_x("along x");
  along_x.split([] TESSERA_HOST_DEVICE(auto it, auto r) { *r = *it.offset(0, 1); },
                concurrent_padded_access(u, StencilShape::along({0})), out);
  EXPECT_EQ(along_x.count(GraphNodeRole::halo), 4u);
  Graph wrong("wrong");
  EXPECT_THROW(wrong.split(cross, concurrent_padded_access(u, StencilShape::along({2})), out), Error);
}

TEST(GraphStructure, SyncWaitsForEveryUnfinishedNode) {
  Graph g("sync");
  g.emplace([] {}).named("A").then([] {}).named("B").emplace([] {}).named("C").sync([] {}).named("S");
  // A is followed by B and C; B and C are followed by nothing: S waits for both.
  EXPECT_EQ(node(g, "S").num_predecessors(), 2u);
  EXPECT_TRUE(has_edge(&node(g, "B"), &node(g, "S")));
  EXPECT_TRUE(has_edge(&node(g, "C"), &node(g, "S")));
}

TEST(GraphStructure, SubgraphsJoinBlockToBlock) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  Tensor<double, 1> x(memory, Extent<1>{30}, o.named("x"));
  Graph main("main"), sub("sub");
  main.split(no_op, x).named("M");
  sub.split(no_op, x).named("S").then([] {}).named("after");
  main.then(sub);
  EXPECT_EQ(sub.size(), 0u) << "the subgraph's nodes moved into main";
  ASSERT_EQ(main.size(), 7u);
  EXPECT_EQ(main.num_passes(), 1u);
  for (int b = 0; b < 3; ++b) {
    Node& s = node(main, "S [b" + std::to_string(b) + "]");
    EXPECT_EQ(s.num_predecessors(), 1u);
    EXPECT_TRUE(has_edge(&node(main, "M [b" + std::to_string(b) + "]"), &s));
  }
  main.then([] {}).named("end");
  EXPECT_TRUE(has_edge(&node(main, "after"), &node(main, "end")));
}

TEST(GraphStructure, ConditionalEndsAPassAndDotShowsIt) {
  Graph g("loop");
  int runs = 0;
  g.emplace([&runs] { ++runs; }).named("body").conditional([&runs] { return runs < 3; }).then([] {}).named("after");
  EXPECT_EQ(g.num_passes(), 2u);
  const std::string dot = g.to_dot();
  EXPECT_NE(dot.find("repeats while its condition holds"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"body\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("cluster_1"), std::string::npos) << dot;
}

TEST(GraphStructure, DotMarksHaloNodes) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  o.with_padding(1);
  Tensor<double, 1> x(memory, Extent<1>{8}, o.named("x"));
  Graph g("dot");
  g.split([] TESSERA_HOST_DEVICE(auto u) { *u = *u.offset(0, -1); }, exclusive_padded_access(x)).named("k");
  const std::string dot = g.to_dot();
  EXPECT_NE(dot.find("\"k halo 0->1\", shape=box, style=dashed"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"k [b1]\", shape=box"), std::string::npos) << dot;
}

}  // namespace
