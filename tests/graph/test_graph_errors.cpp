// Bad graphs give a clear tessera::Error: padded access without padding, a split over
// differently cut tensors, a cycle made by re-wiring, empty graphs and predicates, misuse of
// subgraphs; and a node's exception reaches the run's future.

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using namespace tessera;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no tessera::Error";
}

class GraphErrors : public ::testing::Test {
 protected:
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory{devices};
  Executor ex;
};

auto touch = [] TESSERA_HOST_DEVICE(auto it) { *it += 1.0; };
auto look = [] TESSERA_HOST_DEVICE(auto it) { (void)*it; };

TEST_F(GraphErrors, PaddedAccessNeedsPadding) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  Tensor<double, 1> x(memory, Extent<1>{8}, o.named("flat"));
  Graph g("g");
  const std::string m = error_of([&] { g.split(look, concurrent_padded_access(x)); });
  EXPECT_NE(m.find("tensor 'flat' is passed with padded access but has no padding"), std::string::npos) << m;
}

TEST_F(GraphErrors, SplitOverDifferentPartitioningsIsRejected) {
  TensorOptions<1> two, four;
  two.partitions = Extent<1>{2};
  four.partitions = Extent<1>{4};
  Tensor<double, 1> a(memory, Extent<1>{8}, two.named("a"));
  Tensor<double, 1> b(memory, Extent<1>{8}, four.named("b"));
  Graph g("g");
  const std::string m = error_of([&] { g.split([] TESSERA_HOST_DEVICE(auto x, auto y) { *y = *x; }, a, b); });
  EXPECT_NE(m.find("tensor 'b' has 4 blocks but 'a' has 2"), std::string::npos) << m;
}

TEST_F(GraphErrors, ACycleMadeByRewiringIsReportedWhenRun) {
  Graph g("cyclic");
  g.emplace([] {}).named("first").then([] {}).named("second");
  g.find("second")->precede(*g.find("first"));
  const std::string m = error_of([&] { g.run(ex).get(); });
  EXPECT_NE(m.find("has a cycle"), std::string::npos) << m;
  EXPECT_NE(m.find("'first'"), std::string::npos) << m;
}

TEST_F(GraphErrors, EmptyGraphsAndPredicates) {
  Graph g("empty");
  EXPECT_NE(error_of([&] { g.run(ex).get(); }).find("Graph 'empty' is empty"), std::string::npos);
  EXPECT_NE(error_of([&] { g.conditional([] { return false; }); }).find("conditional() has nothing to repeat"),
            std::string::npos);
  g.emplace([] {});
  EXPECT_NE(error_of([&] { g.conditional({}); }).find("empty predicate"), std::string::npos);
  EXPECT_NE(error_of([&] { g.run_until(ex, {}); }).find("empty stop predicate"), std::string::npos);
}

TEST_F(GraphErrors, SubgraphMisuse) {
  Graph g("g"), loop("loop");
  g.emplace([] {});
  EXPECT_NE(error_of([&] { g.then(g); }).find("cannot be added to itself"), std::string::npos);
  Graph empty("nothing");
  EXPECT_NE(error_of([&] { g.then(empty); }).find("subgraph 'nothing' is empty"), std::string::npos);
  int n = 0;
  loop.emplace([&n] { ++n; }).conditional([&n] { return n < 2; });
  EXPECT_NE(error_of([&] { g.emplace(loop); }).find("cannot run beside other nodes; add it with then()"),
            std::string::npos);
  Graph h("h");
  EXPECT_NE(error_of([&] { h.named("x"); }).find("has no operation to name"), std::string::npos);
}

TEST_F(GraphErrors, GpuKindNeedsDevices) {
  Tensor<double, 1> x(memory, Extent<1>{8}, TensorOptions<1>{}.named("x"));
  Graph g(ExecKind::gpu, "gpu");
  const std::string m = error_of([&] { g.split(touch, x); });
  EXPECT_NE(m.find("lives on the host and there is no device"), std::string::npos) << m;
}

TEST_F(GraphErrors, ANodesExceptionReachesTheFuture) {
  Graph g("throws");
  int after = 0;
  g.emplace([] { throw std::runtime_error("boom in a node"); }).then([&after] { ++after; });
  try {
    g.run(ex).get();
    FAIL() << "no exception";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("boom in a node"), std::string::npos) << e.what();
  }
  EXPECT_EQ(after, 0) << "a node after a failed one must not run";

  Graph looping("predicate throws");
  looping.emplace([] {}).conditional([]() -> bool { throw Error("predicate failed"); });
  EXPECT_NE(error_of([&] { looping.run(ex).get(); }).find("predicate failed"), std::string::npos);
}

}  // namespace
