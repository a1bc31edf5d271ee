#pragma once
// Choosing and creating CUDA devices for a DeviceSet. No CUDA header here: device_set.cpp
// includes this and stays free of the CUDA API.

#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>

#include <memory>
#include <string>
#include <vector>

namespace tessera::detail {

/// How many GPUs the CUDA runtime sees; 0 with `why` saying why when it sees none or cannot tell
/// (no driver, no device).
int cuda_device_count(std::string& why);

/// Creates the GPUs `options.ordinals` names (every GPU when empty) and enables peer access
/// between every pair that supports it. Errors start with `context` (the selection text) and
/// name a missing ordinal and how many GPUs exist.
std::vector<std::unique_ptr<Device>> make_cuda_devices(const CudaOptions& options, const std::string& context);

/// The CUDA-specific part of a DeviceSet::describe() line: model, compute capability, memory.
std::string describe_cuda_device(const Device& device);

}  // namespace tessera::detail
