// Bad input to the loops front end: each is a tessera::Error that names the loop, the dataset and
// what was wrong; a failed chain is dropped and the context goes on.
#define TESSERA_LOOPS_CHECKED 1
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace {

namespace tl = tessera::loops;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no tessera::Error)";
}

class LoopErrors : public ::testing::Test {
 protected:
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context{devices, executor};
  tl::Block block{context, 2, "grid"};
  tl::Dataset<double> u{block, {.size = {8, 8, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "u"};
  tl::Dataset<double> v{block, {.size = {8, 8, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "v"};
  tl::Stencil zero{2, {{0, 0, 0}}, "00"};
  tl::Stencil cross{2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross"};
};

TEST_F(LoopErrors, ARangeWhoseStencilReachesPastTheHalo) {
  const auto m = message_of([&] {
    tl::par_loop([](tl::Acc<double> a, tl::Acc<const double> b) { a(0, 0) = b(1, 0); }, "smooth", block,
                 tl::Range::of(2, {-1, 9, 0, 8}), tl::write(v, zero), tl::read(u, cross));
  });
  EXPECT_NE(m.find("par_loop 'smooth', dataset 'u'"), std::string::npos) << m;
  EXPECT_NE(m.find("reaches [-2, 10), outside the dataset and its halo [-1, 9)"), std::string::npos) << m;
  EXPECT_EQ(context.pending(), 0u);
}

template <typename T, typename S = tessera::Owned>
struct Cell : tessera::Record<S, T, tessera::Vector<T, 2>> {
  TESSERA_RECORD(Cell)
  TESSERA_FIELD(mass, 0)
  TESSERA_FIELD(momentum, 1)
};

TEST_F(LoopErrors, ARecordDatasetsOffsetOutsideTheStencilIsNamedToo) {
  using L = tessera::Strided;
  tl::Dataset<Cell<double>, L> cells(block, {.size = {8, 8, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}}, "cells");
  tl::par_loop([](tl::Acc<double> a, tl::Acc<const Cell<double>, L> c) { a(0, 0) = c(-1, 1).mass(); }, "corner",
               block, tl::Range::of(2, {0, 8, 0, 8}), tl::write(v, zero), tl::read(cells, cross));
  const auto m = message_of([&] { context.execute(); });
  EXPECT_NE(m.find("par_loop 'corner', dataset 'cells': offset (-1, 1) is not in stencil 'cross'"),
            std::string::npos)
      << m;
}

TEST_F(LoopErrors, AnOffsetOutsideTheStencilFailsTheChainNamingIt) {
  tl::par_loop([](tl::Acc<double> a, tl::Acc<const double> b) { a(0, 0) = b(1, 1); }, "diagonal", block,
               tl::Range::of(2, {0, 8, 0, 8}), tl::write(v, zero), tl::read(u, cross));
  const auto m = message_of([&] { context.execute(); });
  EXPECT_NE(m.find("par_loop 'diagonal', dataset 'u': offset (1, 1) is not in stencil 'cross'"), std::string::npos)
      << m;
  // The failed chain is gone; the next one runs.
  EXPECT_EQ(context.pending(), 0u);
  tl::par_loop([](tl::Acc<double> a) { a(0, 0) = 4.0; }, "four", block, tl::Range::of(2, {0, 8, 0, 8}),
               tl::write(v, zero));
  EXPECT_EQ(v.fetch()[v.index(3, 3)], 4.0);
}

TEST_F(LoopErrors, WritingThroughANeighbourStencil) {
  const auto m = message_of([&] {
    tl::par_loop([](tl::Acc<double> a) { a(1, 0) = 1.0; }, "spill", block, tl::Range::of(2, {0, 8, 0, 8}),
                 tl::write(u, cross));
  });
  EXPECT_NE(m.find("par_loop 'spill', dataset 'u': written through stencil 'cross'"), std::string::npos) << m;
}

TEST_F(LoopErrors, DatasetsOfAnotherBlockAndStencilsOfOtherDimensions) {
  tl::Block other(context, 2, "other");
  tl::Dataset<double> w(other, {.size = {8, 8, 1}}, "w");
  auto m = message_of([&] {
    tl::par_loop([](tl::Acc<double> a) { a(0, 0) = 1.0; }, "mixed", block, tl::Range::of(2, {0, 8, 0, 8}),
                 tl::write(w, zero));
  });
  EXPECT_NE(m.find("dataset 'w': declared on block 'other', but the loop runs on block 'grid'"), std::string::npos) << m;
  const tl::Stencil line(1, {{0, 0, 0}}, "line");
  m = message_of([&] {
    tl::par_loop([](tl::Acc<double> a) { a(0, 0) = 1.0; }, "flat", block, tl::Range::of(2, {0, 8, 0, 8}),
                 tl::write(u, line));
  });
  EXPECT_NE(m.find("stencil 'line' has 1 dimensions, the block 2"), std::string::npos) << m;
}

TEST_F(LoopErrors, BadShapesStencilsRangesAndValues) {
  EXPECT_NE(message_of([&] { tl::Dataset<double> d(block, {.size = {0, 4, 1}}, "d"); }).find("Dataset 'd', dimension 0: size 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] { tl::Dataset<double> d(block, {.size = {4, 4, 1}, .d_m = {1, 0, 0}}, "d"); })
                .find("d_m is zero or negative"),
            std::string::npos);
  EXPECT_NE(message_of([&] { tl::Dataset<double> d(block, {.size = {4, 4, 3}}, "d"); }).find("dimension 2"),
            std::string::npos);
  EXPECT_NE(message_of([] { tl::Stencil s(2, std::vector<tl::Offset>{}, "empty"); }).find("Stencil 'empty' has no points"),
            std::string::npos);
  EXPECT_NE(message_of([] { tl::Stencil s(2, {{0, 0, 1}}, "deep"); }).find("reaches into dimension 2"),
            std::string::npos);
  EXPECT_NE(message_of([] { (void)tl::Range::of(2, {0, 4, 0}); }).find("3 bounds for 2 dimensions"), std::string::npos);
  EXPECT_NE(message_of([&] { tl::Block b(context, 4, "hyper"); }).find("Block 'hyper': 4 dimensions"), std::string::npos);
  EXPECT_NE(message_of([&] {
              tl::par_loop([](tl::Acc<double> a) { a(0, 0) = 1.0; }, "backwards", block, tl::Range::of(2, {5, 2, 0, 8}),
                           tl::write(u, zero));
            }).find("par_loop 'backwards': range in dimension 0 is [5, 2)"),
            std::string::npos);
  EXPECT_NE(message_of([&] { u.assign(std::vector<double>(3)); }).find("Dataset 'u': assign got 3 values for 100"),
            std::string::npos);
}

TEST_F(LoopErrors, AKernelThatThrowsFailsTheValueAskedFor) {
  tl::Reduction<double> r(context, tl::ReduceOp::inc, "r");
  tl::par_loop([](tl::Acc<const double>, double&) { throw std::runtime_error("bad site"); }, "thrower", block,
               tl::Range::of(2, {0, 8, 0, 8}), tl::read(u, zero), tl::reduce(r));
  const auto m = message_of([&] { (void)r.get(); });
  EXPECT_NE(m.find("bad site"), std::string::npos) << m;
  EXPECT_EQ(r.get(), 0.0);  // nothing left to run; the identity
}

}  // namespace
