#include "sim_device.hpp"

#include "sim_stream.hpp"

#include "../host/large_pages.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/bytes.hpp>

#include <cstring>
#include <unistd.h>
#include <thread>

namespace tessera::detail {

SimDevice::SimDevice(int ordinal, const SimDeviceOptions& options, double slowdown)
    : Device(DeviceKind::sim, ordinal, "sim:" + std::to_string(ordinal)), options_(options), slowdown_(slowdown) {
  if (options.memory_bytes == 0) throw Error("device " + name() + ": a simulated device needs a memory size above 0");
  if (options.compute_streams == 0) throw Error("device " + name() + ": at least one compute stream is needed");
  // Untouched pages cost nothing on Linux, so a large simulated memory is cheap until used.
  // Aligned as a GPU allocation is, so the pool can use every byte; large arenas get the host
  // device's large pages, so kernels on sim stream through memory as they do on the host.
  const std::size_t bytes = options.memory_bytes;
  // Larger than the machine's memory cannot be meant, and sizes near 2^64 would wrap in the
  // page round-up below.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && bytes / std::size_t(page) > std::size_t(pages))
    throw Error("device " + name() + ": cannot reserve " + format_bytes(bytes) + " for its arena: the machine has " +
                format_bytes(std::size_t(pages) * std::size_t(page)) + " of memory");
  void* arena = uses_large_pages(bytes)
                    ? map_large_pages(bytes)
                    : ::operator new(bytes, std::align_val_t{PoolAllocator::alignment}, std::nothrow);
  if (arena == nullptr)
    throw Error("device " + name() + ": cannot reserve " + format_bytes(bytes) + " of host memory for its arena");
  memory_ = std::unique_ptr<std::byte, ArenaDelete>(static_cast<std::byte*>(arena), ArenaDelete{bytes});
  // No per-thread caches: a device's budget must see every free byte at once, or eviction
  // would evict while memory sits idle in another thread's cache.
  PoolOptions pool_options;
  pool_options.thread_cache_bytes = 0;
  pool_ = std::make_unique<PoolAllocator>(memory_.get(), options.memory_bytes, name(), pool_options);
  create_streams(options.compute_streams, [this](StreamRole role, std::string stream_name) {
    return std::make_unique<SimStream>(this, role, std::move(stream_name), role == StreamRole::compute ? slowdown_ : 0.0);
  });
}

SimDevice::~SimDevice() { destroy_streams(); }

void SimDevice::ArenaDelete::operator()(std::byte* p) const noexcept {
  if (uses_large_pages(bytes))
    unmap_large_pages(p, bytes);
  else
    ::operator delete(p, std::align_val_t{PoolAllocator::alignment});
}

void* SimDevice::allocate(std::size_t bytes) { return pool_->allocate(bytes); }
void* SimDevice::try_allocate(std::size_t bytes) { return pool_->try_allocate(bytes); }
void SimDevice::deallocate(void* p, std::size_t bytes) { pool_->deallocate(p, bytes); }

bool SimDevice::owns(const void* p) const noexcept {
  auto* b = static_cast<const std::byte*>(p);
  return b >= memory_.get() && b < memory_.get() + options_.memory_bytes;
}

void SimDevice::copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction, Stream& stream) {
  const bool dst_here = owns(dst), src_here = owns(src);
  check_copy(dst_here, src_here, bytes, direction, stream);
  static constexpr const char* direction_names[] = {"copy h2d ", "copy d2h ", "copy d2d "};
  std::string label = direction_names[static_cast<int>(direction)] + format_bytes(bytes);
  auto copy = [dst, src, bytes, o = options_] {
    std::memcpy(dst, src, bytes);
    if (o.copy_bytes_per_second > 0 || o.copy_latency.count() > 0) {
      auto modelled = o.copy_latency + std::chrono::nanoseconds(static_cast<std::int64_t>(
                                           o.copy_bytes_per_second > 0 ? 1e9 * static_cast<double>(bytes) /
                                                                             o.copy_bytes_per_second
                                                                       : 0.0));
      std::this_thread::sleep_for(modelled);
    }
  };
  if (auto* sim = dynamic_cast<SimStream*>(&stream)) sim->enqueue_copy(std::move(copy), std::move(label));
  else stream.enqueue_host(std::move(copy), std::move(label));
}

bool SimDevice::copy_to_device_staged(void* dst, const void* src, std::size_t bytes, Stream& stream) {
  check_copy(owns(dst), owns(src), bytes, CopyDirection::host_to_device, stream);
  if (bytes == 0) return false;
  std::shared_ptr<std::byte[]> staging(new std::byte[bytes]);
  std::memcpy(staging.get(), src, bytes);
  copy_async(dst, staging.get(), bytes, CopyDirection::host_to_device, stream);
  stream.retain(std::move(staging));
  return true;
}

}  // namespace tessera::detail
