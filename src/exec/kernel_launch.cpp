// The kernel engine's launch errors, one wording for every front end (exec/detail/kernel_launch.hpp).
#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>

namespace tessera::detail {

void throw_needs_nvcc(const std::string& work, const Device& device) {
  throw Error(work + " runs on " + device.name() +
              ", but its kernel was compiled without CUDA: compile the file that calls it with nvcc (a .cu file) to "
              "run kernels on CUDA devices, or run the work on the host or a sim device");
}

void check_cuda_launch(const std::string& work, const Grid& grid, std::size_t shared_bytes) {
  constexpr std::size_t max_items = 1024, max_shared = 48 * 1024;
  if (grid.items.volume() > max_items)
    throw Error(work + ": " + std::to_string(grid.items.volume()) + " items per group " + grid.items.to_string() +
                "; a GPU runs at most " + std::to_string(max_items) + " per group: use more groups of fewer items");
  if (shared_bytes > max_shared)
    throw Error(work + ": " + std::to_string(shared_bytes) + " bytes of shared scratch; a GPU group gets at most " +
                std::to_string(max_shared));
  if (grid.groups.x >= (std::size_t{1} << 31) || grid.groups.y > 65535 || grid.groups.z > 65535)
    throw Error(work + ": " + grid.groups.to_string() + " groups exceed what a GPU can launch (2^31 - 1, 65535, 65535)");
}

void throw_cuda_launch_error(const std::string& work, const Device& device, const char* error) {
  throw Error(work + ": the kernel launch on " + device.name() + " failed: " + std::string(error));
}

}  // namespace tessera::detail
