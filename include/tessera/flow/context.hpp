#pragma once
// flow::Context: what one firing of an operation sees (Alea's "script", §4.1): the values it
// consumed, where it runs, its data there, and the way to launch kernels and emit results. The
// same fire() runs on the host (kernels become parallel loops on the executor's workers), on a
// simulated device (the loop runs on the device's stream thread) and on a CUDA GPU (a grid
// launch on the firing's stream, when the operation's file was compiled by nvcc).

#include <any>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/exec/detail/kernel_launch.hpp"
#include "tessera/flow/array.hpp"
#include "tessera/flow/detail/cuda_launch.hpp"
#include "tessera/flow/port.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/sched/executor.hpp"

namespace tessera {
class Device;
class Stream;
}  // namespace tessera

namespace tessera::flow {

class Flow;
class Operation;

namespace detail {
struct Firing;
class Engine;
[[noreturn]] void throw_not_consumed(const Operation& op, const InputBase& port);
[[noreturn]] void throw_foreign_port(const Operation& op, const PortBase& port);
[[noreturn]] void throw_bad_value(const Operation& op, const PortBase& port);
}  // namespace detail

/// An array this firing allocated for a result, and where to write it (in the firing's space).
template <typename T, std::size_t D>
struct Allocated {
  Array<T, D> array;
  T* data;
};

class Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Whether this firing consumed a value from `port` (operations with their own readiness).
  template <typename T, typename O>
  bool has(const InputPort<T, O>& port) const {
    check_port(port);
    return slot(port.index()).has_value();
  }
  /// The value this firing consumed from `port`. Throws tessera::Error when it consumed none.
  template <typename T, typename O>
  const T& get(const InputPort<T, O>& port) const {
    check_port(port);
    const std::any& a = slot(port.index());
    if (!a.has_value()) detail::throw_not_consumed(operation(), port);
    const T* v = std::any_cast<T>(&a);
    if (v == nullptr) detail::throw_bad_value(operation(), port);
    return *v;
  }
  /// Sends `value` out of `port`, to every connected input and on_receive callback, after the
  /// results of earlier firings of this operation.
  template <typename T, typename O>
  void emit(OutputPort<T, O>& port, T value) {
    check_port(port);
    emit_token(port.index(), detail::make_token(std::move(value)));
  }

  /// Where the firing runs: 0 for the host, i for accelerator i - 1.
  std::size_t space() const noexcept { return space_; }
  bool on_device() const noexcept { return stream_ != nullptr; }
  /// The stream device work goes to; throws tessera::Error on the host.
  Stream& stream() const;
  Device& device() const;
  Executor& executor() const noexcept { return *executor_; }
  Flow& flow() const noexcept { return *flow_; }
  const Operation& operation() const noexcept;
  /// The input set of the values consumed (Flow::send starts one; results inherit it).
  std::uint64_t input_set() const noexcept;

  /// The array's data in this firing's space (copied there first if it is not valid there).
  template <typename T, std::size_t D>
  const T* read(const Array<T, D>& a) {
    const Buffer* b = a.buffer();
    return b == nullptr ? nullptr : static_cast<const T*>(prepare(*b, Access::read));
  }
  /// A new array of `shape` for a result, and its storage in this firing's space.
  template <typename T, std::size_t D>
  Allocated<T, D> allocate(const std::array<std::size_t, D>& shape) {
    Allocated<T, D> r{Array<T, D>::uninitialised(flow(), shape), nullptr};
    if (const Buffer* b = r.array.buffer()) r.data = static_cast<T*>(prepare(*b, Access::write));
    return r;
  }

  /// Runs `body(i)` for i in [0, n) where the firing runs; `body` must be TESSERA_HOST_DEVICE
  /// and capture data pointers by value. Counts one kernel launch.
  template <typename Body, typename Variant = tessera::detail::build_variant>
  void launch(std::string_view name, std::size_t n, const Body& body) {
    count_kernel();
    if (n == 0) return;
    if (stream_ == nullptr) {
      executor_->parallel_for(0, n, body);
      return;
    }
    auto label = [&] { return kernel_label(name); };
    tessera::detail::launch_on_stream(
        *stream_, label,
        [body, n] {
          for (std::size_t i = 0; i < n; ++i) body(i);
        },
        [&](void* native) {
          tessera::detail::cuda_body<Variant>(native, device(), label, [&](auto s) {
            if (const char* err = detail::launch_flat_on_cuda(static_cast<void*>(s), n, body))
              tessera::detail::throw_cuda_launch_error(label(), device(), err);
          });
        });
  }
  /// Runs `work` once where the firing runs, on a host thread (the calling worker, or a sim
  /// device's stream thread in stream order); throws tessera::Error on a CUDA device, where work
  /// must be a kernel. For host libraries (BLAS) on host memory. Counts one kernel launch.
  template <typename Work>
  void run_on_host_thread(std::string_view name, Work work) {
    count_kernel();
    if (stream_ == nullptr) {
      work();
      return;
    }
    if (stream_native() != nullptr) throw_host_work_on_cuda(name);
    enqueue_host(std::move(work), kernel_label(name));
  }
  /// Counts library kernels launched directly (cuBLAS), for Flow::stats.
  void count_kernel(std::size_t n = 1) noexcept;
  void* stream_native() const noexcept;

 private:
  friend class detail::Engine;
  Context(detail::Firing& firing, Flow& flow, Executor& executor, std::size_t space, Stream* stream)
      : firing_(firing), flow_(&flow), executor_(&executor), space_(space), stream_(stream) {}
  const std::any& slot(std::size_t input) const;
  void emit_token(std::size_t output, detail::Token token);
  void check_port(const detail::PortBase& port) const {
    if (&port.owner() != &operation()) detail::throw_foreign_port(operation(), port);
  }
  void* prepare(const Buffer& b, Access mode);
  std::string kernel_label(std::string_view name) const;
  void enqueue_host(std::function<void()> work, std::string label);
  [[noreturn]] void throw_host_work_on_cuda(std::string_view name) const;

  detail::Firing& firing_;
  Flow* flow_;
  Executor* executor_;
  std::size_t space_;
  Stream* stream_;
};

}  // namespace tessera::flow
