#pragma once
// The step of tests/graph/test_device_values.cpp (and of the CUDA test of the same): reduce
// into a one-site tensor, a one-site kernel that turns the total into the next coefficient,
// and a kernel that reads it through tessera::uniform; with a sequential host model. Values are
// small integers and powers of two, so every result is exact.

#include <gtest/gtest.h>

#include <tessera/core/host_device.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace device_values {

using Field = tessera::Tensor<double, 2>;
using Scalar = tessera::Tensor<double, 1>;

inline double initial(std::int64_t i, std::int64_t j) { return static_cast<double>((5 * i + 3 * j) % 17); }

/// u += step * (i mod 3), contributing the new value.
struct Advance {
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, double step, C largest) const {
    *u = *u + step * static_cast<double>(u.global_idx(0) % 3);
    *largest = *u;
  }
};
/// step = 2^-k for the k with largest * 2^-k in [1, 2), as a one-site kernel: the next step's
/// coefficient from this step's total, on the device. Counts the steps it sets.
struct NextStep {
  template <typename Largest, typename Step, typename Count>
  TESSERA_HOST_DEVICE void operator()(Largest largest, Step step, Count count) const {
    double s = 1.0, m = *largest;
    while (m >= 2.0) m *= 0.5, s *= 0.5;
    *step = s;
    *count = *count + 1.0;
  }
};

/// The host model: `steps` steps from the initial field.
struct Model {
  std::vector<double> u;
  double largest = 0, step = 0, count = 0;
};
inline Model model(std::size_t nx, std::size_t ny, int steps) {
  Model m;
  m.u.resize(nx * ny);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i)
      m.u[i + nx * j] = initial(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
  m.largest = 16;  // the initial field's largest value
  for (int k = 0; k < steps; ++k) {
    double s = 1.0, v = m.largest;
    while (v >= 2.0) v *= 0.5, s *= 0.5;
    m.step = s;
    m.count += 1;
    m.largest = -1e300;
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t i = 0; i < nx; ++i) {
        double& x = m.u[i + nx * j];
        x = x + s * static_cast<double>(i % 3);
        m.largest = std::max(m.largest, x);
      }
  }
  return m;
}

inline void fill_initial(Field& u) {
  const tessera::Extent<2> n = u.size();
  std::vector<double> v(n.volume());
  for (std::size_t j = 0; j < n.sizes[1]; ++j)
    for (std::size_t i = 0; i < n.sizes[0]; ++i)
      v[i + n.sizes[0] * j] = initial(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
  u.fill_from(v.data());
}

inline void expect_model(const Field& u, double largest, double step, double count, const Model& m,
                         const std::string& what) {
  std::vector<double> got(u.size().volume());
  u.gather_to(got.data());
  EXPECT_EQ(got, m.u) << what;
  EXPECT_EQ(largest, m.largest) << what;
  EXPECT_EQ(step, m.step) << what;
  EXPECT_EQ(count, m.count) << what;
}

}  // namespace device_values
