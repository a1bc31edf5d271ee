// What a firing sees: its consumed values, its results, and its data in the space it runs in
// (host holds on the workers, prepared accesses on a device stream: the same two mechanisms
// for_each blocks and AccessGraph nodes use).

#include "engine.hpp"

#include <fmt/format.h>
#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/flow/context.hpp>

namespace tessera::flow {

namespace detail {

void throw_not_consumed(const Operation& op, const InputBase& port) {
  throw Error(
      fmt::format("flow: operation '{}' read input '{}', but this firing consumed no value from it (check "
                  "Context::has first; the operation's readiness rule chose the inputs)",
                  op.name(), port.name()));
}
void throw_foreign_port(const Operation& op, const PortBase& port) {
  throw Error(fmt::format("flow: a firing of '{}' used port {}, which belongs to another operation", op.name(),
                          port.full_name()));
}
void throw_bad_value(const Operation& op, const PortBase& port) {
  throw Error(fmt::format("flow: operation '{}' found a value of another type at input '{}'", op.name(), port.name()));
}

}  // namespace detail

Stream& Context::stream() const {
  if (stream_ == nullptr)
    throw Error(fmt::format("flow: operation '{}' asked for a device stream, but this firing runs on the host",
                            operation().name()));
  return *stream_;
}

Device& Context::device() const { return stream_ == nullptr ? flow_->devices().host() : stream_->device(); }
const Operation& Context::operation() const noexcept { return *firing_.op; }
std::uint64_t Context::input_set() const noexcept { return firing_.set; }
const std::any& Context::slot(std::size_t input) const { return firing_.inputs[input]; }
void Context::emit_token(std::size_t output, detail::Token token) {
  firing_.produced.emplace_back(output, std::move(token));
}
void Context::count_kernel(std::size_t n) noexcept { flow_->engine_for_ports()->count_kernels(n); }
void* Context::stream_native() const noexcept { return stream_ == nullptr ? nullptr : stream_->native_handle(); }

void* Context::prepare(const Buffer& b, Access mode) {
  Buffer& held = firing_.buffers.emplace_back(b);
  if (stream_ == nullptr) {
    if (mode == Access::read)
      if (void* p = held.host_if_sole(); p != nullptr) return p;
    return firing_.holds->hold(held, mode);
  }
  if (firing_.device_accesses == nullptr)
    throw Error(fmt::format("flow: operation '{}' prepared data outside its fire()", operation().name()));
  return firing_.device_accesses->prepare(held, mode);
}

std::string Context::kernel_label(std::string_view name) const {
  return fmt::format("{}: {}", operation().name(), name);
}

void Context::enqueue_host(std::function<void()> work, std::string label) {
  stream_->enqueue_host(std::move(work), std::move(label));
}

void Context::throw_host_work_on_cuda(std::string_view name) const {
  throw Error(
      fmt::format("flow: operation '{}' ran '{}' as host work on {}, a CUDA device; give it a CUDA kernel or "
                  "pin the operation to the host (Operation::pin(0))",
                  operation().name(), name, stream_->device().name()));
}

}  // namespace tessera::flow
