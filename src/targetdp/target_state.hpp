#pragma once
// The one targetDP target of a process: which device it is, the allocations made on it, and the
// error of the last failed call. Shared by the files that implement tessera/targetdp.h.

#include <tessera/targetdp.h>
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <cstddef>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace tessera::targetdp::detail {

class TargetState {
 public:
  static TargetState& instance();

  /// Selects the target (throws tessera::Error for a bad selection or live allocations).
  void init(const char* devices);
  void finalize();
  /// The target, selected from TESSERA_DEVICES on first use.
  Device& target();
  bool on_host() { return target().kind() == DeviceKind::host; }
  /// The stream kernels and copies run on, in order (sim and CUDA targets).
  Stream& stream() { return target().compute_stream(0); }

  void* allocate(std::size_t bytes, const char* call);
  void deallocate(void* p, const char* call);
  /// Throws unless [p, p + bytes) lies inside one live allocation.
  void check_range(const void* p, std::size_t bytes, const char* call, const char* what);

  /// A kernel that failed on the sim stream, reported by the next syncTarget.
  void note_kernel_failure(std::string message);
  std::optional<std::string> take_kernel_failure();

 private:
  std::recursive_mutex mutex_;
  std::optional<DeviceSet> devices_;
  Device* target_ = nullptr;
  std::map<const char*, std::size_t> allocations_;  // start -> bytes
  std::mutex failure_mutex_;
  std::optional<std::string> kernel_failure_;
};

/// A failed targetDP call: the status the C interface returns, and the message.
class Failure : public Error {
 public:
  Failure(tdpStatus status, const std::string& message) : Error(message), status_(status) {}
  tdpStatus status() const noexcept { return status_; }

 private:
  tdpStatus status_;
};

/// Records `message` as this thread's last error.
void set_last_error(std::string message);
const char* last_error_c_str() noexcept;

/// Runs `body`, turning every exception into a status and this thread's last-error message
/// (prefixed with `call` where the message does not already start with it).
template <class Body>
tdpStatus guarded(const char* call, Body&& body) noexcept {
  auto named = [call](const std::string& what) {
    return what.rfind(call, 0) == 0 ? what : std::string(call) + ": " + what;
  };
  try {
    body();
    return tdpSuccess;
  } catch (const Failure& e) {
    set_last_error(named(e.what()));
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error(named("out of host memory"));
    return tdpErrorMemory;
  } catch (const std::exception& e) {
    set_last_error(named(e.what()));
    return tdpErrorTarget;
  } catch (...) {
    set_last_error(named("failed with a non-standard exception"));
    return tdpErrorTarget;
  }
}

}  // namespace tessera::targetdp::detail
