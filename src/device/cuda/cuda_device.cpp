#include "cuda_device.hpp"

#include "cuda_check.hpp"
#include "cuda_stream.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/bytes.hpp>

namespace tessera::detail {

namespace {

constexpr std::size_t pool_granularity = std::size_t{2} << 20;  // cudaMalloc's own page size
constexpr std::size_t initial_events = 64;  // events alive at once in a typical run; more are made on demand

// No per-thread caches: a device's budget must see every free byte at once, or eviction would
// evict while memory sits idle in another thread's cache.
PoolOptions shared_pool_options() {
  PoolOptions o;
  o.thread_cache_bytes = 0;
  return o;
}

const char* direction_name(CopyDirection d) {
  return d == CopyDirection::host_to_device ? "h2d" : d == CopyDirection::device_to_host ? "d2h" : "d2d";
}

// As a sim device names its copies in traces: "copy h2d 1.0 MiB".
std::string copy_label(CopyDirection d, std::size_t bytes) {
  return std::string("copy ") + direction_name(d) + " " + format_bytes(bytes);
}

}  // namespace

void CudaDevice::DeviceFree::operator()(void* p) const noexcept {
  CudaDeviceScope scope(ordinal, std::nothrow);
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

void CudaDevice::HostFree::operator()(void* p) const noexcept {
  if (cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
}

CudaDevice::CudaDevice(int ordinal, const CudaOptions& options)
    : Device(DeviceKind::cuda, ordinal, "cuda:" + std::to_string(ordinal)),
      memory_(nullptr, DeviceFree{ordinal}),
      pinned_(nullptr, HostFree{}) {
  if (options.compute_streams == 0) throw Error("device " + name() + ": at least one compute stream is needed");
  CudaDeviceScope scope(ordinal);

  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, ordinal), [&] { return "device " + name() + ": reading its properties"; });
  model_ = prop.name;
  cc_major_ = prop.major;
  cc_minor_ = prop.minor;

  std::size_t free = 0;
  cuda_check(cudaMemGetInfo(&free, &total_memory_), [&] { return "device " + name() + ": reading its free memory"; });
  std::size_t want = options.memory_bytes;
  if (want == 0) {
    if (!(options.memory_fraction > 0.0 && options.memory_fraction <= 1.0))
      throw Error("device " + name() + ": CudaOptions::memory_fraction must be in (0, 1], not " +
                  std::to_string(options.memory_fraction));
    want = static_cast<std::size_t>(options.memory_fraction * static_cast<double>(free)) / pool_granularity *
           pool_granularity;
  }
  if (want < (std::size_t{1} << 20) || want > free)
    throw Error("device " + name() + ": a device pool of " + format_bytes(want) + " was asked for, but " +
                format_bytes(free) + " of the GPU's " + format_bytes(total_memory_) +
                " are free; set CudaOptions::memory_bytes (at least 1MiB) or memory_fraction to fit");
  void* region = nullptr;
  cuda_check(cudaMalloc(&region, want), [&] {
    return "device " + name() + ": reserving the device pool of " + format_bytes(want) + " with cudaMalloc (" +
           format_bytes(free) + " free)";
  });
  memory_.reset(region);
  memory_bytes_ = want;
  pool_ = std::make_unique<PoolAllocator>(region, want, name(), shared_pool_options());

  if (options.pinned_host_bytes > 0) {
    void* host = nullptr;
    // Portable: pinned for every GPU, so a buffer staged here copies at full speed to any of them.
    cuda_check(cudaHostAlloc(&host, options.pinned_host_bytes, cudaHostAllocPortable), [&] {
      return "device " + name() + ": reserving the pinned host pool of " + format_bytes(options.pinned_host_bytes) +
             " with cudaHostAlloc";
    });
    pinned_.reset(host);
    pinned_pool_ = std::make_unique<PoolAllocator>(host, options.pinned_host_bytes, name() + " pinned host",
                                                   shared_pool_options());
  }

  events_ = CudaEventPool::create(ordinal, name(), initial_events);
  trace_clock_ = std::make_shared<CudaTraceClock>(ordinal, name());
  if (pinned_pool_) staging_ = std::make_unique<PinnedStaging>(*pinned_pool_, events_, name());
  create_streams(options.compute_streams, [this](StreamRole role, std::string stream_name) {
    return std::make_unique<CudaStream>(this, role, std::move(stream_name), events_, trace_clock_);
  });
}

CudaDevice::~CudaDevice() {
  destroy_streams();
  staging_.reset();  // its blocks' copies are done now, and its pool is still there
}

void* CudaDevice::allocate(std::size_t bytes) { return pool_->allocate(bytes); }
void* CudaDevice::try_allocate(std::size_t bytes) { return pool_->try_allocate(bytes); }
void CudaDevice::deallocate(void* p, std::size_t bytes) { pool_->deallocate(p, bytes); }

void* CudaDevice::try_allocate_pinned_host(std::size_t bytes) {
  return pinned_pool_ ? pinned_pool_->try_allocate(bytes) : nullptr;
}

void CudaDevice::deallocate_pinned_host(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  if (!pinned_pool_)
    throw Error("device " + name() + " has no pinned host pool, so it cannot take back " + format_bytes(bytes));
  pinned_pool_->deallocate(p, bytes);
}

bool CudaDevice::copy_to_device_staged(void* dst, const void* src, std::size_t bytes, Stream& stream) {
  check_copy(owns(dst), owns(src), bytes, CopyDirection::host_to_device, stream);
  if (bytes == 0 || !staging_) return false;
  CudaDeviceScope scope(ordinal());
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, src) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  // Pinned (or managed) memory is copied asynchronously as it is: a staging memcpy would only cost.
  if (attributes.type != cudaMemoryTypeUnregistered) return false;
  auto& cstream = static_cast<CudaStream&>(stream);
  CudaStream::TimingMark mark = cstream.start_timing();
  if (!staging_->copy(dst, src, bytes, cstream.cuda_stream())) return false;  // no slice: nothing enqueued
  cstream.finish_timing(std::move(mark), [&] { return copy_label(CopyDirection::host_to_device, bytes); }, "copy");
  return true;
}

bool CudaDevice::owns(const void* p) const noexcept {
  auto* b = static_cast<const std::byte*>(p);
  auto* base = static_cast<const std::byte*>(memory_.get());
  return b >= base && b < base + memory_bytes_;
}

void CudaDevice::copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection direction, Stream& stream) {
  const bool dst_here = owns(dst), src_here = owns(src);
  check_copy(dst_here, src_here, bytes, direction, stream);
  auto what = [&] {
    return "device " + name() + ": copy " + direction_name(direction) + " of " + format_bytes(bytes) + " on stream " +
           stream.name();
  };
  if (bytes == 0) return;
  // Every stream of this device is a CudaStream: the check above made sure it is ours.
  auto& cstream = static_cast<CudaStream&>(stream);
  cudaStream_t s = cstream.cuda_stream();
  CudaDeviceScope scope(ordinal());
  CudaStream::TimingMark mark = cstream.start_timing();
  if (direction == CopyDirection::device_to_device && !(dst_here && src_here)) {
    const void* remote = dst_here ? src : dst;
    cudaPointerAttributes attributes{};
    cuda_check(cudaPointerGetAttributes(&attributes, remote),
               [&] { return what() + ": locating the other GPU's pointer"; });
    if (attributes.type != cudaMemoryTypeDevice)
      throw Error(what() + ": one side is this device's memory, the other is not memory of any GPU");
    const int remote_device = attributes.device;
    // A peer copy: direct over NVLink/PCIe where peer access is on, staged by the driver else.
    cuda_check(cudaMemcpyPeerAsync(dst, dst_here ? ordinal() : remote_device, src, src_here ? ordinal() : remote_device,
                                   bytes, s),
               what);
    cstream.finish_timing(std::move(mark), [&] { return copy_label(direction, bytes); }, "copy");
    return;
  }
  const cudaMemcpyKind kind = direction == CopyDirection::host_to_device   ? cudaMemcpyHostToDevice
                              : direction == CopyDirection::device_to_host ? cudaMemcpyDeviceToHost
                                                                           : cudaMemcpyDeviceToDevice;
  cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, s), what);
  cstream.finish_timing(std::move(mark), [&] { return copy_label(direction, bytes); }, "copy");
}

void CudaDevice::make_current() {
  cuda_check(cudaSetDevice(ordinal()), [&] { return "making " + name() + " the current device"; });
}

std::string CudaDevice::summary() const {
  std::string out = model_ + ", compute capability " + std::to_string(cc_major_) + "." + std::to_string(cc_minor_) +
                    ", " + format_bytes(total_memory_) + " on the GPU, pinned host pool " +
                    format_bytes(pinned_host_capacity());
  if (!peers_.empty()) {
    out += ", peer access to";
    for (int p : peers_) out += " cuda:" + std::to_string(p);
  }
  return out;
}

}  // namespace tessera::detail
