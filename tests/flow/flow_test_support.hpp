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

}  // namespace flow_test
