#pragma once
// The processing elements a Group kernel runs on (kernel_task, and any front end that launches
// Group kernels through the kernel engine): a 1-, 2- or 3-d grid of groups, each a 1-, 2- or 3-d
// block of items (CUDA: blocks of threads; OpenCL: work-groups of work-items). PREMA §3.1.2.

#include <tessera/core/host_device.hpp>

#include <cstddef>
#include <string>

namespace tessera {

/// Extents in up to three dimensions; unused ones stay 1.
///
///   tessera::Dim3 blocks{n / 256};        // 1-d
///   tessera::Dim3 tiles{nx / 16, ny / 16}; // 2-d
struct Dim3 {
  std::size_t x = 1, y = 1, z = 1;

  TESSERA_HOST_DEVICE constexpr std::size_t volume() const noexcept { return x * y * z; }
  TESSERA_HOST_DEVICE constexpr std::size_t operator[](int d) const noexcept { return d == 0 ? x : d == 1 ? y : z; }
  constexpr bool operator==(const Dim3&) const = default;
  std::string to_string() const {
    return "{" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "}";
  }
};

/// Groups and the items in each. A task without a grid runs its kernel once (one group of one
/// item), which is what library calls (a BLAS routine) want.
///
///   tessera::Grid g{{n / 128}, {128}};   // n/128 groups of 128 items
struct Grid {
  Dim3 groups;
  Dim3 items;

  constexpr bool operator==(const Grid&) const = default;
};

}  // namespace tessera
