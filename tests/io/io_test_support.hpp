#pragma once
// Shared by the io tests: a scratch directory per test, and the device fixture (host, one and
// four simulated devices) for tests that go through tensors.

#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include "../tensor/tensor_test_support.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace io_test {

/// A fresh directory under the system temp dir, removed with everything in it at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("tessera_io_") + info->test_suite_name() + "_" + info->name() + "_" +
                       std::to_string(::getpid());
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The device fixture of the tensor tests (host, sim:1, sim:4).
using tensor_test::device_name;
using tensor_test::OnDevices;

#define IO_TEST_ON_DEVICES(Suite) TENSOR_TEST_ON_DEVICES(Suite)

// The euler2d state: density, energy, then D velocity components.
template <typename T, std::size_t D, typename S = tessera::Owned>
struct State : tessera::Record<S, tessera::Vector<T, D + 2>> {
  TESSERA_RECORD(State)
  template <typename S2>
  using with_storage = State<T, D, S2>;
  TESSERA_FIELD(density, 0, 0)
  TESSERA_FIELD(energy, 0, 1)
};

}  // namespace io_test
