#pragma once
// The device sets every layer's tests run on, in one place: the host alone, one simulated device
// and four (64 MiB each). Tensor, graph, exec and task tests all take their parameters from here.

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

namespace test_backends {

inline const char* const specs[] = {"host", "sim:1:64MiB", "sim:4:64MiB"};
/// The same, for suites whose parameter is a std::string.
inline const std::vector<std::string> spec_strings(std::begin(specs), std::end(specs));

/// "host", "sim_1", "sim_4": the suffix of a test's name.
inline std::string name(const std::string& spec) {
  std::string s = spec.substr(0, spec.find(':', 4));
  for (char& c : s)
    if (c == ':') c = '_';
  return s;
}

}  // namespace test_backends
