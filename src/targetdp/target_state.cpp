#include "target_state.hpp"

#include "../core/log_internal.hpp"
#include "../core/trace_sources.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace tessera::targetdp::detail {

namespace {
thread_local std::string last_error;
}

void set_last_error(std::string message) { last_error = std::move(message); }
const char* last_error_c_str() noexcept { return last_error.c_str(); }

TargetState& TargetState::instance() {
  // The trace sources that sim streams leave at their end exist before this state, so they
  // are destroyed after it (statics go in the reverse order of their construction).
  static const bool sources_first = (tessera::detail::TraceSources::instance(), true);
  (void)sources_first;
  static TargetState state;
  return state;
}

void TargetState::init(const char* devices) {
  std::lock_guard lock(mutex_);
  if (!allocations_.empty())
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("cannot change the target while {} allocation(s) of targetMalloc are live on {}; "
                              "targetFree them (or call targetFinalize) first",
                              allocations_.size(), target_->name()));
  if (devices_) {
    for (std::size_t i = 0; i < devices_->num_accelerators(); ++i) devices_->accelerator(i).synchronize();
  }
  target_ = nullptr;
  devices_.reset();
  DeviceSet set = DeviceSet::select(devices ? std::string_view(devices) : std::string_view{});
  devices_.emplace(std::move(set));
  // A program that never calls targetFinalize still releases its target at exit, before the
  // statics the devices use (trace sources, logging), which were made after this state was:
  // an atexit handler registered now runs before their destructors.
  static const bool finalize_at_exit = [] {
    std::atexit([] { tdp_finalize(); });
    return true;
  }();
  (void)finalize_at_exit;
  target_ = devices_->num_accelerators() > 0 ? &devices_->accelerator(0) : &devices_->host();
}

void TargetState::finalize() {
  std::lock_guard lock(mutex_);
  if (!devices_) return;
  if (target_->kind() != DeviceKind::host) target_->synchronize();
  if (!allocations_.empty()) {
    tessera::detail::log_warn("targetFinalize: {} allocation(s) of targetMalloc on {} were never freed; freeing them",
                              allocations_.size(), target_->name());
    for (auto& [p, bytes] : allocations_) target_->deallocate(const_cast<char*>(p), bytes);
    allocations_.clear();
  }
  target_ = nullptr;
  devices_.reset();
}

Device& TargetState::target() {
  std::lock_guard lock(mutex_);
  if (!target_) init(nullptr);
  return *target_;
}

void* TargetState::allocate(std::size_t bytes, const char* call) {
  Device& device = target();
  std::lock_guard lock(mutex_);
  // A zero-byte allocation still gets a distinct address, as malloc's may, so it can be freed.
  const std::size_t reserved = bytes == 0 ? 1 : bytes;
  void* p = nullptr;
  try {
    p = device.allocate(reserved);
  } catch (const Error& e) {
    throw Failure(tdpErrorMemory,
                  fmt::format("{}: {} bytes do not fit the target {} ({} of {} bytes in use): {}", call, bytes,
                              device.name(), device.bytes_in_use(), device.memory_capacity(), e.what()));
  }
  allocations_.emplace(static_cast<const char*>(p), reserved);
  return p;
}

void TargetState::deallocate(void* p, const char* call) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(static_cast<const char*>(p));
  if (it == allocations_.end())
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: {} is not an allocation of targetMalloc on {} (freed twice, or a host pointer?)",
                              call, p, target_ ? target_->name() : std::string("(no target)")));
  // Kernels still running may use it: the target finishes them first, as cudaFree does.
  if (target_->kind() != DeviceKind::host) target_->synchronize();
  target_->deallocate(p, it->second);
  allocations_.erase(it);
}

void TargetState::check_range(const void* p, std::size_t bytes, const char* call, const char* what) {
  std::lock_guard lock(mutex_);
  if (!p) throw Failure(tdpErrorInvalidValue, fmt::format("{}: the {} pointer is null", call, what));
  const char* c = static_cast<const char*>(p);
  auto it = allocations_.upper_bound(c);
  if (it == allocations_.begin())
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: the {} pointer {} is not in any allocation of targetMalloc on {}", call, what, p,
                              target_ ? target_->name() : std::string("(no target)")));
  --it;
  const std::size_t offset = static_cast<std::size_t>(c - it->first);
  if (offset >= it->second && !(offset == it->second && bytes == 0))
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: the {} pointer {} is not in any allocation of targetMalloc on {}", call, what, p,
                              target_->name()));
  if (bytes > it->second - offset)
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: {} bytes at offset {} overrun the {} allocation of {} bytes on {}", call, bytes,
                              offset, what, it->second, target_->name()));
}

void TargetState::note_kernel_failure(std::string message) {
  std::lock_guard lock(failure_mutex_);
  if (!kernel_failure_) kernel_failure_ = std::move(message);
}

std::optional<std::string> TargetState::take_kernel_failure() {
  std::lock_guard lock(failure_mutex_);
  auto f = std::move(kernel_failure_);
  kernel_failure_.reset();
  return f;
}

}  // namespace tessera::targetdp::detail

using tessera::targetdp::detail::Failure;
using tessera::targetdp::detail::guarded;
using tessera::targetdp::detail::TargetState;

extern "C" {

tdpStatus tdp_init(const char* devices) {
  return guarded("targetInit", [&] { TargetState::instance().init(devices); });
}

tdpStatus tdp_finalize(void) {
  return guarded("targetFinalize", [] { TargetState::instance().finalize(); });
}

const char* tdp_target_name(void) {
  static thread_local std::string name;
  if (guarded("targetInit", [] { name = TargetState::instance().target().name(); }) != tdpSuccess) name = "(none)";
  return name.c_str();
}

const char* tdp_last_error(void) { return tessera::targetdp::detail::last_error_c_str(); }

void tdp_fail(const char* call) {
  const char* message = tdp_last_error();
  std::fprintf(stderr, "targetDP error: %s\n", message && *message ? message : call);
  std::exit(EXIT_FAILURE);
}

}  // extern "C"
