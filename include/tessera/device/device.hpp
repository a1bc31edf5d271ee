#pragma once
// Device: one place work runs and memory lives — the host, a CUDA GPU, or a simulated discrete
// device. Every backend offers the same things: memory from a pool carved once at start-up,
// in-order streams (compute streams and one copy stream per direction), events, asynchronous
// copies, and host callbacks in stream order (how GPU-kind nodes complete without parking a
// worker). PREMA §3.1.5 (the Device API layer).

#include <tessera/device/stream.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

enum class DeviceKind : std::uint8_t { host, cuda, sim };

constexpr std::string_view to_string(DeviceKind k) noexcept {
  return k == DeviceKind::host ? "host" : k == DeviceKind::cuda ? "cuda" : "sim";
}

enum class CopyDirection : std::uint8_t { host_to_device, device_to_host, device_to_device };

/// A device. Obtained from a DeviceSet (see DeviceSet::select), never constructed by users.
///
///   tessera::Device& d = devices.accelerator(0);
///   void* p = d.allocate(1 << 20);
///   d.copy_async(p, host_data, 1 << 20, tessera::CopyDirection::host_to_device,
///                d.copy_stream(tessera::CopyDirection::host_to_device));
///   tessera::Event done = d.copy_stream(tessera::CopyDirection::host_to_device).record();
///   d.compute_stream(0).wait(done);   // the kernel waits on the device, not on the host
class Device {
public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceKind kind() const noexcept { return kind_; }
  /// Index among the devices of its kind (sim:2 is ordinal 2).
  int ordinal() const noexcept { return ordinal_; }
  /// "host", "cuda:0", "sim:3".
  const std::string& name() const noexcept { return name_; }

  /// Memory from the device's pool (carved from one allocation made at start-up). Throws
  /// tessera::Error naming the request and the capacity when it cannot fit.
  virtual void* allocate(std::size_t bytes) = 0;
  /// As allocate, but nullptr when it does not fit (the memory layer then evicts and retries).
  virtual void* try_allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) = 0;
  virtual std::size_t memory_capacity() const noexcept = 0;
  virtual std::size_t bytes_in_use() const noexcept = 0;

  /// Page-locked host memory from this device's pinned pool (CUDA: one cudaHostAlloc made at
  /// start-up), which copies to and from the device reach at full bandwidth; nullptr where the
  /// device has no such pool (host, sim) or it is full: callers then use ordinary host memory.
  virtual void* try_allocate_pinned_host(std::size_t /*bytes*/) { return nullptr; }
  virtual void deallocate_pinned_host(void* /*p*/, std::size_t /*bytes*/) {}

  std::size_t num_compute_streams() const noexcept { return compute_.size(); }
  Stream& compute_stream(std::size_t i);
  /// The compute stream that block `block` of a partitioned tensor runs on: blocks on one
  /// device spread over its streams, and every launch of the block (kernels, reductions, graph
  /// nodes) lands on the same one, so they stay in order without events.
  ///
  ///   tessera::Stream& s = device.block_stream(b);
  Stream& block_stream(std::size_t block) { return compute_stream(block % num_compute_streams()); }
  Stream& copy_stream(CopyDirection d) { return *copy_[static_cast<std::size_t>(d)]; }

  /// Copies `bytes` from `src` to `dst` in `stream`'s order. Host pointers, this device's
  /// pointers, and (device_to_device) another device's pointers of the same backend.
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction,
                          Stream& stream) = 0;

  /// As copy_async from host memory `src` to this device's `dst`, but returns true only once
  /// `src` may be reused: the bytes went through a staging block of this device (CUDA: its
  /// pinned pool, so the copy neither waits for `stream` nor runs at pageable speed; sim:
  /// ordinary memory). Returns false, having copied nothing, where staging would not help or
  /// cannot be had (the host device, an empty copy, a GPU given a source that is pinned already
  /// or whose pinned pool is full): then use copy_async and keep `src` until `stream` has
  /// passed the copy.
  ///
  ///   if (!gpu.copy_to_device_staged(d, user, bytes, s)) {
  ///     gpu.copy_async(d, user, bytes, tessera::CopyDirection::host_to_device, s);
  ///     s.synchronize();  // or keep `user` alive until then some other way
  ///   }
  virtual bool copy_to_device_staged(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/, Stream& /*stream*/) {
    return false;
  }

  /// Waits until every stream of the device has run everything enqueued so far.
  void synchronize();

  /// Makes this the calling thread's current device, for code that launches kernels itself
  /// (CUDA: cudaSetDevice, which kernel launches on this device's streams need); nothing on
  /// the host and sim devices. Throws tessera::Error when the device cannot be made current.
  ///
  ///   gpu.make_current();
  ///   scale<<<blocks, 256, 0, static_cast<cudaStream_t>(gpu.compute_stream(0).native_handle())>>>(n, x);
  virtual void make_current() {}

protected:
  Device(DeviceKind kind, int ordinal, std::string name) : kind_(kind), ordinal_(ordinal), name_(std::move(name)) {}

  /// Creates `compute` compute streams and one copy stream per direction, named
  /// "<device>/compute0", ..., "<device>/h2d", "/d2h", "/d2d"; `make(role, name)` builds one.
  template <class MakeStream>
  void create_streams(std::size_t compute, MakeStream make) {
    for (std::size_t i = 0; i < compute; ++i)
      compute_.push_back(make(StreamRole::compute, name_ + "/compute" + std::to_string(i)));
    copy_[0] = make(StreamRole::copy_host_to_device, name_ + "/h2d");
    copy_[1] = make(StreamRole::copy_device_to_host, name_ + "/d2h");
    copy_[2] = make(StreamRole::copy_device_to_device, name_ + "/d2d");
  }
  /// The checks every backend's copy_async makes: `stream` is this device's, and the pointers
  /// that lie in this device's memory (`dst_here`, `src_here`) match `direction`. Throws
  /// tessera::Error naming the copy otherwise.
  void check_copy(bool dst_here, bool src_here, std::size_t bytes, CopyDirection direction, const Stream& stream) const;
  /// Backends call this first in their destructor: streams finish their queues before the
  /// memory they may still touch goes away.
  void destroy_streams() noexcept {
    compute_.clear();
    for (auto& c : copy_) c.reset();
  }

  std::vector<std::unique_ptr<Stream>> compute_;
  std::unique_ptr<Stream> copy_[3];

private:
  DeviceKind kind_;
  int ordinal_;
  std::string name_;
};

}  // namespace tessera
