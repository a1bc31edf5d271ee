// Halo exchange: after kernels on the devices changed every block, exchange_padding leaves each
// block's inner padding (faces, edges, corners) equal to the global array and the outer padding
// untouched; whole-row halos between device blocks move on the devices (no host round trip).
#include "tensor_test_support.hpp"

#include <vector>

using namespace tessera;
using namespace tensor_test;

namespace {

class TensorHalo : public OnDevices {};

// Fills u = code, adds 1 on the devices, exchanges, and checks every stored site: interior and
// inner padding hold code + 1 (the global array after the kernel), outer padding still 0.
template <typename T, std::size_t D, Layout L>
void check_exchange(Tensor<T, D, L>& t) {
  std::vector<T> in(t.size().volume());
  for_each_index(Box<D>(t.size()), [&](const Index<D>& i) { in[t.size().linear(i)] = static_cast<T>(code(i)); });
  t.fill_from(in.data());
  add_on_devices(t, T(1));
  t.exchange_padding();
  const auto h = t.host(Access::read);
  std::size_t inner = 0;
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const BlockGeometry<D>& g = t.geometry(b);
    for_each_index(g.interior.grown(g.padding), [&](const Index<D>& s) {
      const bool in_domain = t.size().contains(s);
      inner += in_domain && !g.interior.contains(s);
      ASSERT_EQ(h.block(b).at(s - g.interior.lo), in_domain ? static_cast<T>(code(s)) + T(1) : T(0))
          << "block " << b << " site " << s[0] << (D > 1 ? "," + std::to_string(s[D - 1]) : "");
    });
  }
  EXPECT_GT(inner, 0u);
}

TEST_P(TensorHalo, OneDimensional) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{3};
  o.sub_partitions = Extent<1>{2};
  o.with_padding(2);
  Tensor<double, 1> t(memory(), Extent<1>{13}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, TwoDimensionalWithSubPartitions) {
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.sub_partitions = {2, 1};
  o.with_padding(2);
  Tensor<float, 2, Tiled<16>> t(memory(), {11, 9}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, ThreeDimensionalCornersAndEdges) {
  TensorOptions<3> o;
  o.partitions = {2, 2, 2};
  o.padding = {1, 2, 1};
  Tensor<float, 3, Strided> t(memory(), {5, 6, 4}, o);
  check_exchange(t);
}

TEST_P(TensorHalo, WholeRowHalosStayOnTheDevices) {
  // No x padding: every halo is whole rows, so device blocks copy them device to device.
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};
  o.padding = {0, 1, 2};
  Tensor<float, 3> t(memory(), {6, 4, 5}, o);
  std::vector<float> in(t.size().volume());
  for_each_index(Box<3>(t.size()), [&](const Index<3>& i) { in[t.size().linear(i)] = code(i); });
  t.fill_from(in.data());
  add_on_devices(t, 1.0f);
  memory().synchronize();
  const TransferStats before = memory().stats().transferred;
  t.exchange_padding();
  memory().synchronize();
  if (accelerators() > 0) {
    EXPECT_EQ(memory().stats().transferred, before);  // no staging through the host
    for (std::size_t b = 0; b < t.num_blocks(); ++b)
      EXPECT_FALSE(t.buffer(b).valid_rows(0).contains(t.buffer(b).all())) << "block " << b;
  }
  const auto h = t.host(Access::read);
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    const BlockGeometry<3>& g = t.geometry(b);
    for_each_index(g.interior.grown(g.padding), [&](const Index<3>& s) {
      const bool in_domain = t.size().contains(s);
      ASSERT_EQ(h.block(b).at(s - g.interior.lo), in_domain ? code(s) + 1.0f : 0.0f)
          << "block " << b << " site " << s[0] << "," << s[1] << "," << s[2];
    });
  }
}

TEST_P(TensorHalo, TransferRejectsForeignBlocks) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{2};
  o.with_padding(1);
  Tensor<float, 1> t(memory(), Extent<1>{4}, o);
  EXPECT_THROW(t.transfer(HaloTransfer<1>{0, 0, {}}), Error);
  EXPECT_THROW(t.transfer(HaloTransfer<1>{0, 2, {}}), Error);
}

TENSOR_TEST_ON_DEVICES(TensorHalo);

}  // namespace
