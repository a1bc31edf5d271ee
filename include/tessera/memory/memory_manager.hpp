#pragma once
// tessera::MemoryManager: the memory spaces of a DeviceSet (the host and each accelerator), a
// byte budget per accelerator, and least-recently-used eviction of Buffer replicas when a
// budget is full. PREMA's coherent data layer (§3.1.4, §4.1).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

class Device;
class DeviceSet;

namespace detail {
class MemoryCore;
}

struct MemoryOptions {
  /// Bytes of Buffer replicas each accelerator may hold. Empty: each device's
  /// memory_capacity(); one value: every accelerator; otherwise one value per accelerator, in
  /// DeviceSet order. The host has no budget.
  ///
  ///   tessera::MemoryOptions o;
  ///   o.device_budgets = {256 << 20};  // 256 MiB on every accelerator
  std::vector<std::size_t> device_budgets;
};

/// Bytes copied, by direction. A copy between devices of different kinds goes through the host
/// and counts once in each of device_to_host and host_to_device.
struct TransferStats {
  std::size_t host_to_device = 0;
  std::size_t device_to_host = 0;
  std::size_t device_to_device = 0;

  std::size_t total() const noexcept { return host_to_device + device_to_host + device_to_device; }
  bool operator==(const TransferStats&) const = default;
};

struct MemoryStats {
  TransferStats transferred;           ///< bytes of every copy of every buffer, write-backs included
  std::size_t copies = 0;              ///< the copies those bytes took (each costs a launch and a wait)
  std::size_t evictions = 0;           ///< device replicas freed to make room
  std::size_t bytes_written_back = 0;  ///< rows copied to the host because the evicted replica held the only valid copy
  /// Host Buffer::request calls whose future was not ready when made: device work (a kernel, a
  /// copy) still had to run first, so a host that calls get() waits for the device there.
  std::size_t host_waits = 0;
  /// Replicas allocated in an accelerator's memory (each from its pool, after any eviction). A
  /// time-stepping loop in steady state should add none per step.
  std::size_t device_allocations = 0;
};

/// Owns the memory spaces Buffers live in: space 0 is the host, space i (1..N) is
/// devices.accelerator(i - 1). Create one per DeviceSet, before any Buffer.
///
///   auto devices = tessera::DeviceSet::select("sim:2:64MiB");
///   tessera::MemoryManager memory(devices, {.device_budgets = {32 << 20}});
///   tessera::Buffer u(memory, rows, sizeof(double) * nx, "u");
///
/// Lifetime: Buffers (and the transfers in flight for them) keep the manager's state alive, but
/// not the devices: the DeviceSet must outlive the manager and every Buffer. The destructor
/// waits for the accelerators' streams, so that no transfer outlives the devices by accident.
/// Thread safe.
class MemoryManager {
 public:
  /// Throws tessera::Error when options.device_budgets has neither 0, 1 nor one entry per
  /// accelerator, or holds a zero budget.
  explicit MemoryManager(DeviceSet& devices, const MemoryOptions& options = {});
  ~MemoryManager();
  MemoryManager(const MemoryManager&) = delete;
  MemoryManager& operator=(const MemoryManager&) = delete;

  /// 1 + the number of accelerators.
  std::size_t num_spaces() const noexcept;
  /// The device behind a space (space 0: devices.host()). Throws tessera::Error when out of range.
  ///
  ///   tessera::Stream& s = memory.device(1).compute_stream(0);
  Device& device(std::size_t space) const;
  /// The space of a device of this manager's DeviceSet; throws tessera::Error for any other.
  ///
  ///   buffer.prepare(memory.space_of(stream.device()), stream, tessera::Access::read, rows);
  std::size_t space_of(const Device& device) const;
  /// The replica budget of a space in bytes (the host: SIZE_MAX, it has none).
  std::size_t budget(std::size_t space) const;
  /// Bytes of replicas now allocated in a space.
  std::size_t bytes_in_use(std::size_t space) const;
  /// Copies, evictions and write-backs so far, over every buffer.
  MemoryStats stats() const;
  /// Blocks until every copy and access enqueued so far on the accelerators has run.
  void synchronize();

 private:
  friend class Buffer;
  std::shared_ptr<detail::MemoryCore> core_;
};

}  // namespace tessera
