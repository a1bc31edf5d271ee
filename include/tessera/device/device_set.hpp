#pragma once
// Which devices a program uses: the host plus zero or more accelerators, chosen through the API
// or the TESSERA_DEVICES environment variable.

#include <tessera/device/device.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// Simulated devices: memory size, streams, and an optional copy model (bandwidth, latency) so
/// that copies take time and their overlap with kernels shows in traces.
struct SimOptions {
  std::size_t memory_bytes = std::size_t{1} << 30;
  std::size_t compute_streams = 2;
  double copy_bytes_per_second = 0;  ///< 0: as fast as memcpy
  std::chrono::nanoseconds copy_latency{0};
  /// Relative compute speeds, one for every device or one per device (`sim:2:speed=1,4`), so
  /// that work split between unequal devices can be balanced and tested without a GPU. The
  /// fastest device runs work at the speed its stream thread really runs it; a device of speed
  /// s takes fastest/s times the CPU time the work took (its stream holds the work's end back).
  /// Empty: no model.
  std::vector<double> compute_speeds;
};

/// CUDA GPUs: which ones, and what each reserves at start-up. A device never calls cudaMalloc or
/// cudaHostAlloc after that, so its pools must be big enough for the run.
struct CudaOptions {
  std::vector<int> ordinals;  ///< CUDA device ordinals; empty: every GPU
  /// The device pool, taken with one cudaMalloc; 0: memory_fraction of the memory free then.
  std::size_t memory_bytes = 0;
  double memory_fraction = 0.8;  ///< leaves room for the CUDA context and libraries' workspaces
  /// Page-locked host memory per GPU (one cudaHostAlloc) for full-bandwidth copies; 0: none.
  std::size_t pinned_host_bytes = std::size_t{256} << 20;
  std::size_t compute_streams = 2;
};

/// The devices of a process: always the host, plus the selected accelerators.
///
///   auto devices = tessera::DeviceSet::select("sim:4:256MiB");
///   for (std::size_t i = 0; i < devices.num_accelerators(); ++i)
///     std::puts(devices.accelerator(i).name().c_str());
///
/// Selection strings: `host` (no accelerators), `sim:N` (N simulated devices of 1 GiB),
/// `sim:N:SIZE` (SIZE like 256MiB or 2GiB), `sim:N[:SIZE]:speed=S[,S...]` (relative compute
/// speeds, see SimOptions), `cuda` (every CUDA GPU), `cuda:0,1` (those GPUs).
/// An empty string reads TESSERA_DEVICES; when that is unset too, every CUDA GPU found is used,
/// else the host alone.
class DeviceSet {
public:
  /// Throws tessera::Error naming the text when it is malformed or asks for a device that is
  /// not there.
  static DeviceSet select(std::string_view spec = {});
  /// `count` simulated devices configured in full.
  static DeviceSet simulated(std::size_t count, const SimOptions& options);
  /// CUDA GPUs configured in full; throws tessera::Error when the build has no CUDA backend, no
  /// GPU is usable, or an ordinal does not exist.
  ///
  ///   tessera::CudaOptions options;
  ///   options.memory_bytes = std::size_t{8} << 30;  // 8 GiB pool on each GPU
  ///   auto devices = tessera::DeviceSet::cuda(options);
  static DeviceSet cuda(const CudaOptions& options = {});
  /// Whether this build has the CUDA device backend (configured with TESSERA_WITH_CUDA=ON).
  static bool has_cuda_backend() noexcept;

  DeviceSet(DeviceSet&&) noexcept;
  DeviceSet& operator=(DeviceSet&&) noexcept;
  ~DeviceSet();

  Device& host() noexcept { return *host_; }
  std::size_t num_accelerators() const noexcept { return accelerators_.size(); }
  Device& accelerator(std::size_t i);
  /// The text it was selected from ("sim:4", or "(default)").
  const std::string& spec() const noexcept { return spec_; }
  /// One line per device, for logs and the `tessera devices` command.
  std::string describe() const;

private:
  DeviceSet() = default;
  std::string spec_;
  std::unique_ptr<Device> host_;
  std::vector<std::unique_ptr<Device>> accelerators_;
};

}  // namespace tessera
