#pragma once
// Shared by the flow tests: the backends of the test matrix and reference data.

#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace flow_test {

/// The backends every catalog test runs on (cuda has its own test where a GPU is present).
inline std::vector<std::string> backends() { return {"host", "sim:1", "sim:4"}; }

inline std::string backend_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s = p.param;
  for (char& ch : s)
    if (ch == ':') ch = '_';
  return s;
}

/// Values with varied magnitudes and signs, so that sums depend on their order.
template <typename T>
std::vector<T> sample(std::size_t n, unsigned salt = 1) {
  std::vector<T> v(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ull * salt;
  for (std::size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v[i] = static_cast<T>(static_cast<double>(s % 20001) / 1000.0 - 10.0);
  }
  return v;
}

/// Checks `got` (m x n, row-major) against the product of a (m x k) and b (k x n), summed in
/// order per entry.
inline void expect_product(const std::vector<double>& a, const std::vector<double>& b, std::size_t m, std::size_t k,
                           std::size_t n, const std::vector<double>& got) {
  ASSERT_EQ(got.size(), m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double e = 0;
      for (std::size_t p = 0; p < k; ++p) e += a[i * k + p] * b[p * n + j];
      ASSERT_NEAR(got[i * n + j], e, 1e-10) << "at (" << i << ", " << j << ")";
    }
}

}  // namespace flow_test
