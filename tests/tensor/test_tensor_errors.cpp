// Every bad input throws tessera::Error naming the tensor, the dimension and the values, and
// saying what to do.
#include "tensor_test_support.hpp"

#include <functional>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorErrors : public OnDevices {};

void expect_error(const std::function<void()>& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no tessera::Error thrown";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nmissing: " << p;
  }
}

TensorOptions<2> named(const char* name) { return TensorOptions<2>{}.named(name); }

TEST_P(TensorErrors, ZeroExtent) {
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 0}, named("rho")); },
               {"tensor 'rho'", "dimension 1 has size 0", "at least one cell"});
}

TEST_P(TensorErrors, NegativeExtent) {
  const int rows = -3;
  expect_error([&] { Tensor<float, 2> t(memory(), {4, rows}, named("rho")); },
               {"tensor 'rho'", "dimension 1 has size -3", "sizes must be positive"});
}

TEST_P(TensorErrors, ZeroPartitions) {
  auto o = named("rho");
  o.partitions = {0, 1};
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 4}, o); }, {"tensor 'rho'", "dimension 0 has 0 partitions", "use at least 1"});
  o.partitions = {1, 1};
  o.sub_partitions = {1, 0};
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 4}, o); }, {"dimension 1 has 0 sub-partitions"});
}

TEST_P(TensorErrors, MoreBlocksThanCells) {
  auto o = named("rho");
  o.partitions = {2, 1};
  o.sub_partitions = {4, 1};
  expect_error([&] { Tensor<float, 2> t(memory(), {5, 4}, o); },
               {"tensor 'rho'", "dimension 0 has 5 cells but 2 partitions x 4 sub-partitions = 8 blocks",
                "use at most 5 blocks"});
}

TEST_P(TensorErrors, PaddingWiderThanABlock) {
  auto o = named("rho");
  o.partitions = {1, 3};
  o.padding = {1, 3};  // y: 8 cells over 3 blocks: 3, 3, 2
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 8}, o); },
               {"tensor 'rho'", "padding 3 in dimension 1", "smallest block there (2 cells", "use padding <= 2"});
  o.padding = {-1, 0};
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 8}, o); }, {"padding -1 in dimension 0 is negative"});
}

TEST_P(TensorErrors, UnknownSpace) {
  auto o = named("rho");
  o.spaces = {0, 7};
  const std::string spaces = std::to_string(accelerators() + 1);
  expect_error([&] { Tensor<float, 2> t(memory(), {4, 4}, o); },
               {"tensor 'rho'", "spaces[1] is memory space 7", ("pass spaces below " + spaces).c_str()});
}

TEST_P(TensorErrors, ResizeToBadSizesKeepsTheTensor) {
  auto o = named("rho");
  o.partitions = {2, 1};
  Tensor<float, 2> t(memory(), {4, 4}, o);
  t.fill(2.0f);
  expect_error([&] { t.resize({1, 4}); }, {"dimension 0 has 1 cells but 2 partitions"});
  EXPECT_EQ(t.size(), (Extent<2>{4, 4}));
  EXPECT_EQ(t.get({3, 3}), 2.0f);
}

TEST_P(TensorErrors, IndexOutsideThePadding) {
  auto o = named("rho");
  o.with_padding(1);
  Tensor<float, 2> t(memory(), {4, 4}, o);
  expect_error([&] { t.get({5, 0}); }, {"tensor 'rho'", "index (5, 0)", "dimension 0", "valid indices are -1 .. 4"});
}

TEST_P(TensorErrors, BadBoundaryRequests) {
  auto o = named("rho");
  o.with_padding(1);
  Tensor<float, 2> t(memory(), {4, 4}, o);
  expect_error([&] { t.load_boundary(ZeroGradient{}, Face{2, Side::low}); }, {"tensor 'rho'", "dimension 2", "has 2 dimensions"});
  expect_error([&] { t.load_boundary(Reflective{0}); }, {"Reflective{0}", "not a tessera::Vector"});
  Tensor<Particle<float>, 2> p(memory(), {4, 4}, o);
  expect_error([&] { p.load_boundary(Reflective{2}); }, {"Reflective{2}"});
}

// Host readers share a tensor; a host writer needs it alone.
TEST_P(TensorErrors, HostWriterWhileReadersHold) {
  Tensor<float, 2> t(memory(), {4, 4}, named("rho"));
  { auto w = t.host(Access::write); }
  auto h = t.host(Access::read);
  EXPECT_NO_THROW({ auto again = t.host(Access::read); });
  EXPECT_THROW(t.host(Access::read_write), Error);
  h.release();
  EXPECT_NO_THROW(t.host(Access::read_write));  // the failed one released what it took
}

TENSOR_TEST_ON_DEVICES(TensorErrors);

}  // namespace
