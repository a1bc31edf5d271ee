// targetMalloc, targetFree, the copies and the constants of tessera/targetdp.h.

#include "target_state.hpp"

#include <tessera/device/submit.hpp>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <vector>

using tessera::CopyDirection;
using tessera::DeviceKind;
using tessera::targetdp::detail::Failure;
using tessera::targetdp::detail::guarded;
using tessera::targetdp::detail::TargetState;

namespace {

void check_host_pointer(const void* p, std::size_t bytes, const char* call, const char* what) {
  if (!p && bytes > 0) throw Failure(tdpErrorInvalidValue, fmt::format("{}: the {} pointer is null", call, what));
}

}  // namespace

extern "C" {

tdpStatus tdp_malloc(void** address, size_t size) {
  return guarded("targetMalloc", [&] {
    if (!address) throw Failure(tdpErrorInvalidValue, "targetMalloc: the address to store the pointer in is null");
    *address = TargetState::instance().allocate(size, "targetMalloc");
  });
}

tdpStatus tdp_calloc(void** address, size_t size) {
  return guarded("targetCalloc", [&] {
    if (!address) throw Failure(tdpErrorInvalidValue, "targetCalloc: the address to store the pointer in is null");
    auto& state = TargetState::instance();
    void* p = state.allocate(size, "targetCalloc");
    tessera::Device& target = state.target();
    if (size == 0) {
      // Nothing to clear.
    } else if (target.kind() == DeviceKind::host) {
      std::memset(p, 0, size);
    } else {
      // Zeros go up from the host: the backends have no memset, and an allocation is made once.
      std::vector<char> zeros(size, 0);
      tessera::submit(state.stream(), {}, [&](tessera::Stream& s) {
        target.copy_async(p, zeros.data(), size, CopyDirection::host_to_device, s);
      });
      state.stream().synchronize();
    }
    *address = p;
  });
}

tdpStatus tdp_free(void* target_pointer) {
  return guarded("targetFree", [&] {
    if (!target_pointer) return;  // as free(NULL)
    TargetState::instance().deallocate(target_pointer, "targetFree");
  });
}

tdpStatus tdp_copy_to_target(void* target_pointer, const void* host_pointer, size_t size) {
  return guarded("copyToTarget", [&] {
    auto& state = TargetState::instance();
    state.check_range(target_pointer, size, "copyToTarget", "target");
    check_host_pointer(host_pointer, size, "copyToTarget", "host");
    if (size == 0) return;
    tessera::Device& target = state.target();
    if (target.kind() == DeviceKind::host) {
      std::memcpy(target_pointer, host_pointer, size);
      return;
    }
    tessera::submit(state.stream(), {}, [&](tessera::Stream& s) {
      target.copy_async(target_pointer, host_pointer, size, CopyDirection::host_to_device, s);
    });
    state.stream().synchronize();
  });
}

tdpStatus tdp_copy_from_target(void* host_pointer, const void* target_pointer, size_t size) {
  return guarded("copyFromTarget", [&] {
    auto& state = TargetState::instance();
    state.check_range(target_pointer, size, "copyFromTarget", "target");
    check_host_pointer(host_pointer, size, "copyFromTarget", "host");
    if (size == 0) return;
    tessera::Device& target = state.target();
    if (target.kind() == DeviceKind::host) {
      std::memcpy(host_pointer, target_pointer, size);
      return;
    }
    tessera::submit(state.stream(), {}, [&](tessera::Stream& s) {
      target.copy_async(host_pointer, target_pointer, size, CopyDirection::device_to_host, s);
    });
    state.stream().synchronize();
  });
}

tdpStatus tdp_copy_constant(void* target_constant, const void* host_value, size_t size, const char* call) {
  const char* name = call ? call : "copyConstantToTarget";
  return guarded(name, [&] {
    if (!target_constant || !host_value)
      throw Failure(tdpErrorInvalidValue, fmt::format("{}: the {} pointer is null", name,
                                                      target_constant ? "host value" : "TARGET_CONST variable"));
    auto& state = TargetState::instance();
    tessera::Device& target = state.target();
    switch (target.kind()) {
      case DeviceKind::host:
        // Host launches finish before they return, so no kernel reads the constant now.
        std::memcpy(target_constant, host_value, size);
        return;
      case DeviceKind::sim: {
        // In stream order: kernels launched before still see the old value, as on a GPU.
        auto bytes = std::make_shared<std::vector<char>>(static_cast<const char*>(host_value),
                                                         static_cast<const char*>(host_value) + size);
        tessera::submit(state.stream(), {}, [&](tessera::Stream& s) {
          s.enqueue_host([target_constant, bytes] { std::memcpy(target_constant, bytes->data(), bytes->size()); },
                         name);
        });
        return;
      }
      case DeviceKind::cuda:
        throw Failure(tdpErrorTarget,
                      fmt::format("{}: the target {} keeps TARGET_CONST variables in constant memory, which only a "
                                  "file compiled by nvcc can write; compile this file as CUDA",
                                  name, target.name()));
    }
  });
}

}  // extern "C"
