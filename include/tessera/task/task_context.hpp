#pragma once
// What a native task body learns about where it runs.

#include <tessera/exec/grid.hpp>

#include <cstddef>
#include <string>

namespace tessera {

class Device;
class Executor;
class Stream;

/// Passed to native task bodies (tessera::native_task). On the host and on sim devices the body *is*
/// the work and runs on a worker or on the sim stream's thread; on a CUDA device the body runs
/// on a host thread and *enqueues* the work on `cuda_stream()` (a library call such as cuBLAS).
///
///   auto t = tessera::native_task("gemm", tessera::TaskKind::gpu,
///       [n](const tessera::TaskContext& ctx, const double* a, const double* b, double* c) {
///         if (ctx.cuda_stream() != nullptr) gemm_on_gpu(ctx.cuda_stream(), n, a, b, c);
///         else gemm_on_cpu(n, a, b, c);
///       }, tessera::read(a), tessera::read(b), tessera::write(c));
class TaskContext {
public:
  TaskContext(Device& device, Stream& stream, Executor* executor, const std::string& task_name, const Grid& grid,
              std::size_t shared_bytes) noexcept
      : device_(&device), stream_(&stream), executor_(executor), name_(&task_name), grid_(grid), shared_bytes_(shared_bytes) {}

  /// The device the task runs on (the host for CPU tasks).
  Device& device() const noexcept { return *device_; }
  /// The stream its work is ordered in.
  Stream& stream() const noexcept { return *stream_; }
  /// The cudaStream_t to enqueue on, on a CUDA device; nullptr elsewhere.
  void* cuda_stream() const noexcept;
  /// The executor whose workers may share a CPU task's groups; nullptr on sim streams.
  Executor* executor() const noexcept { return executor_; }
  const std::string& task_name() const noexcept { return *name_; }
  const Grid& grid() const noexcept { return grid_; }
  std::size_t shared_bytes() const noexcept { return shared_bytes_; }

private:
  Device* device_;
  Stream* stream_;
  Executor* executor_;
  const std::string* name_;
  Grid grid_;
  std::size_t shared_bytes_;
};

}  // namespace tessera
