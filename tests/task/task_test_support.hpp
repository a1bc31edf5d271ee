#pragma once
// Shared by the task tests: the device sets each test runs on, and a bounded wait.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/task/runtime.hpp>

#include <gtest/gtest.h>

#include "../support/backends.hpp"
#include "../support/error_of.hpp"

#include <chrono>
#include <string>

namespace task_test {

/// Every task test runs on the backends every layer's tests share (tests/support/backends.hpp).
inline const auto& backends = test_backends::specs;

inline tessera::DeviceSet devices_for(const std::string& spec) {
  if (spec.rfind("sim:", 0) == 0) {
    tessera::SimOptions o;
    o.memory_bytes = std::size_t{64} << 20;
    return tessera::DeviceSet::simulated(static_cast<std::size_t>(std::stoul(spec.substr(4))), o);
  }
  return tessera::DeviceSet::select(spec);
}

using tessera::test::error_of;

/// Waits for a handle, failing the test (not hanging it) after a generous timeout.
inline void finish(const tessera::TaskHandle& h) {
  ASSERT_TRUE(h.wait_for(std::chrono::seconds(60))) << "task '" << h.name() << "' did not finish";
}

}  // namespace task_test
