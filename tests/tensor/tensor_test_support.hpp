#pragma once
// Shared by the Tensor tests: the device fixture (every test runs on host, sim:1 and sim:4), a
// small Record type, and site values that encode their global position.

#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include "../layout/layout_test_types.hpp"
#include "../support/backends.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace tensor_test {

// The one test Particle: the docs' example (docs/layout.md), shared by every layer's tests.
using layout_test::Particle;

/// A DeviceSet and MemoryManager per test, selected by the test parameter.
class OnDevices : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    devices_ = std::make_unique<tessera::DeviceSet>(tessera::DeviceSet::select(GetParam()));
    memory_ = std::make_unique<tessera::MemoryManager>(*devices_);
  }
  void TearDown() override {
    if (!memory_) return;  // SetUp skipped before building the devices
    memory_->synchronize();
    memory_.reset();
    devices_.reset();
  }
  tessera::MemoryManager& memory() { return *memory_; }
  tessera::DeviceSet& devices() { return *devices_; }
  std::size_t accelerators() const { return devices_->num_accelerators(); }

 private:
  std::unique_ptr<tessera::DeviceSet> devices_;
  std::unique_ptr<tessera::MemoryManager> memory_;
};

inline std::string device_name(const ::testing::TestParamInfo<std::string>& info) {
  return test_backends::name(info.param);
}

#define TENSOR_TEST_ON_DEVICES(Suite) \
  INSTANTIATE_TEST_SUITE_P(Devices, Suite, ::testing::ValuesIn(test_backends::spec_strings), tensor_test::device_name)

/// The value of interior site i: distinct, exact in float for the sizes the tests use.
template <std::size_t D>
float code(const tessera::Index<D>& i) {
  float v = 1.0f, scale = 1.0f;
  for (std::size_t d = 0; d < D; ++d, scale *= 100.0f) v += scale * static_cast<float>(i.coords[d]);
  return v;
}

inline Particle<float> particle(float f) { return Particle<float>({f, f + 0.5f, -f}, {2 * f, 3 * f, 4 * f}); }

inline bool same(const Particle<float>& a, const Particle<float>& b) {
  for (std::size_t j = 0; j < 3; ++j)
    if (a.position()[j] != b.position()[j] || a.velocity()[j] != b.velocity()[j]) return false;
  return true;
}
inline bool same(float a, float b) { return a == b; }

/// Runs a "kernel" on each block in its own space (the sim devices' stream threads), so the
/// block's valid copy moves there: adds `delta` to every interior site. Arithmetic T only.
template <typename T, std::size_t D, tessera::Layout L>
void add_on_devices(tessera::Tensor<T, D, L>& t, T delta) {
  for (std::size_t b = 0; b < t.num_blocks(); ++b) {
    tessera::Stream& s = t.memory().device(t.space(b)).compute_stream(0);
    auto* base = static_cast<std::byte*>(t.buffer(b).prepare(t.space(b), s, tessera::Access::read_write));
    const tessera::BlockView<T, D, L> v{base, t.geometry(b)};
    s.enqueue_host([v, delta] {
      tessera::for_each_index(tessera::Box<D>(v.geometry.interior.extent()),
                              [&](const tessera::Index<D>& i) { v.at(i) += delta; });
    });
    t.buffer(b).finish(t.space(b), s, tessera::Access::read_write);
  }
}

}  // namespace tensor_test
