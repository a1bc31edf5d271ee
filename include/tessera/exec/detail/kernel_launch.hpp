#pragma once
// The kernel engine's launch: the one way a front end's kernel work reaches a backend. for_each
// blocks, reductions and Group kernels (kernel_task) all launch through it. The backend is
// chosen at run time from the stream the work goes to: a stream with a native queue (CUDA) gets
// a grid launch, any other (sim devices) runs the CPU body on its own thread in stream order;
// work on the host's workers runs the CPU body directly. A grid launch needs the kernel's CUDA
// body, which exists only where nvcc compiled the calling file: cuda_body() is the one place
// that tells, and build_variant keeps the nvcc and host instantiations apart at link time.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "tessera/core/function_ref.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/exec/grid.hpp"

namespace tessera {
class Device;
}

namespace tessera::detail {

/// Throws tessera::Error: `work` was to run on `device`, a CUDA GPU, but the file that built
/// its kernel was compiled without nvcc.
[[noreturn]] void throw_needs_nvcc(const std::string& work, const Device& device);
/// Throws tessera::Error when a grid of `grid` with `shared_bytes` of shared memory per group
/// cannot be launched on a GPU; `work` names the kernel.
void check_cuda_launch(const std::string& work, const Grid& grid, std::size_t shared_bytes);
/// Throws tessera::Error for a CUDA launch of `work` on `device` that failed with `error`.
[[noreturn]] void throw_cuda_launch_error(const std::string& work, const Device& device, const char* error);

/// Launches kernel work on `stream`, the backend chosen from the stream: `cuda(native_handle)`
/// where it has a native queue (a cudaStream_t), else `cpu()` enqueued on the stream's own
/// thread under the trace label `label()`. Whatever `cuda` enqueues must follow the stream's
/// order; it throws tessera::Error when the launch fails.
template <class Cpu, class Cuda>
void launch_on_stream(Stream& stream, FunctionRef<std::string()> label, Cpu&& cpu, Cuda&& cuda) {
  if (void* native = stream.native_handle(); native != nullptr)
    cuda(native);
  else
    stream.enqueue_host(std::forward<Cpu>(cpu), label());
}

/// As launch_on_stream, for work a balancer measures: on a stream without a native queue the
/// CPU body is timed by the device's clock (Stream::enqueue_host_timed), which calls `took`;
/// `cuda` times itself (CUDA events), as only it knows where its kernels start and end.
template <class Cpu, class Cuda>
void launch_on_stream_timed(Stream& stream, FunctionRef<std::string()> label, Cpu&& cpu,
                            std::function<void(std::chrono::nanoseconds)> took, Cuda&& cuda) {
  if (void* native = stream.native_handle(); native != nullptr)
    cuda(native);
  else
    stream.enqueue_host_timed(std::forward<Cpu>(cpu), label(), std::move(took));
}

/// Calls `launch(native_handle)` where the calling file has CUDA bodies (Variant: nvcc compiled
/// it); elsewhere throws that `work()` needs nvcc. `launch` must be a generic lambda, so that a
/// host compiler never instantiates its CUDA launch.
template <class Variant, class Launch>
void cuda_body(void* native_handle, const Device& device, FunctionRef<std::string()> work, Launch&& launch) {
  if constexpr (Variant::has_cuda_bodies)
    launch(native_handle);
  else
    throw_needs_nvcc(work(), device);
}

}  // namespace tessera::detail
