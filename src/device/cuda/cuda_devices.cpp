#include "cuda_devices.hpp"

#include "cuda_check.hpp"
#include "cuda_device.hpp"

#include <tessera/core/error.hpp>

#include <algorithm>

namespace tessera::detail {

namespace {

// Direct loads, stores and copies between every pair of selected GPUs that supports it. Peer
// access belongs to the CUDA context, so a second DeviceSet finds it on already.
void enable_peer_access(const std::vector<CudaDevice*>& devices) {
  for (CudaDevice* from : devices) {
    for (CudaDevice* to : devices) {
      if (from == to) continue;
      int can = 0;
      cuda_check(cudaDeviceCanAccessPeer(&can, from->ordinal(), to->ordinal()),
                 [&] { return "asking whether " + from->name() + " can reach " + to->name() + " directly"; });
      if (can == 0) continue;
      CudaDeviceScope scope(from->ordinal());
      cudaError_t err = cudaDeviceEnablePeerAccess(to->ordinal(), 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        cuda_check(err, [&] { return "enabling peer access from " + from->name() + " to " + to->name(); });
      }
      from->add_peer(to->ordinal());
    }
  }
}

}  // namespace

int cuda_device_count(std::string& why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    why = std::string("the CUDA runtime found no usable GPU: ") + cudaGetErrorName(err) + " (" +
          cudaGetErrorString(err) + ")";
    return 0;
  }
  if (count == 0) why = "the CUDA runtime found no GPU on this machine";
  return count;
}

std::vector<std::unique_ptr<Device>> make_cuda_devices(const CudaOptions& options, const std::string& context) {
  std::string why;
  const int count = cuda_device_count(why);
  if (count == 0) throw Error(context + ": CUDA devices were requested but " + why);
  std::vector<int> ordinals = options.ordinals;
  if (ordinals.empty())
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    const int o = ordinals[i];
    if (o < 0 || o >= count)
      throw Error(context + ": CUDA devices were requested but cuda:" + std::to_string(o) +
                  " does not exist: this machine has " + std::to_string(count) +
                  " CUDA GPU(s), cuda:0 to cuda:" + std::to_string(count - 1));
    if (std::find(ordinals.begin(), ordinals.begin() + static_cast<std::ptrdiff_t>(i), o) !=
        ordinals.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error(context + ": cuda:" + std::to_string(o) + " is listed twice");
  }
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<CudaDevice*> cuda;
  for (int o : ordinals) {
    auto d = std::make_unique<CudaDevice>(o, options);
    cuda.push_back(d.get());
    devices.push_back(std::move(d));
  }
  enable_peer_access(cuda);
  return devices;
}

std::string describe_cuda_device(const Device& device) {
  // Only CudaDevice reports DeviceKind::cuda.
  return static_cast<const CudaDevice&>(device).summary();
}

}  // namespace tessera::detail
