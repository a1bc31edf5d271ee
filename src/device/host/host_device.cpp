#include "host_device.hpp"

#include "../event_state.hpp"
#include "large_pages.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/bytes.hpp>

#include <unistd.h>

#include <cstring>
#include <new>

namespace tessera::detail {

namespace {

constexpr std::align_val_t host_alignment{256};  // what device pools guarantee, so code can rely on it
// Blocks from 128 KiB (glibc's smallest mmap threshold) are kept for reuse, up to 16 of them and
// 64 MiB in all: a few objects' worth, not a second allocator.
constexpr std::size_t reuse_at_least = std::size_t{128} << 10;
constexpr std::size_t reuse_at_most = std::size_t{64} << 20;
constexpr std::size_t reuse_blocks = 16;

class HostStream final : public Stream {
public:
  HostStream(Device* device, StreamRole role, std::string name) : Stream(device, role, std::move(name)) {}
  void enqueue_host(std::function<void()> work, std::string) override { work(); }
  void wait(const Event& e) override { e.synchronize(); }
  void then(std::function<void()> callback) override { callback(); }

private:
  void record_into(std::shared_ptr<EventState> state) override { state->set(); }
};

void* allocate_block(std::size_t bytes) noexcept {
  if (uses_large_pages(bytes)) return map_large_pages(bytes);
  return ::operator new(bytes == 0 ? 1 : bytes, host_alignment, std::nothrow);
}
void free_block(void* p, std::size_t bytes) noexcept {
  if (uses_large_pages(bytes))
    unmap_large_pages(p, bytes);
  else
    ::operator delete(p, host_alignment);
}

std::size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : std::size_t{1} << 34;
}

}  // namespace

HostDevice::HostDevice() : Device(DeviceKind::host, 0, "host"), capacity_(physical_memory()) {
  create_streams(1, [this](StreamRole role, std::string stream_name) {
    return std::make_unique<HostStream>(this, role, std::move(stream_name));
  });
}

HostDevice::~HostDevice() {
  for (auto& [bytes, block] : reusable_) free_block(block, bytes);
}

void* HostDevice::try_allocate(std::size_t bytes) {
  // One block larger than the machine's memory cannot be had; asking the allocator anyway
  // overflows the large-page round-up near 2^64 and aborts under sanitizers.
  if (bytes > capacity_) return nullptr;
  void* p = nullptr;
  if (bytes >= reuse_at_least) {
    std::lock_guard lock(reuse_mutex_);
    for (auto it = reusable_.rbegin(); it != reusable_.rend(); ++it) {
      if (it->first != bytes) continue;
      p = it->second;
      reusable_bytes_ -= bytes;
      reusable_.erase(std::next(it).base());
      break;
    }
  }
  if (p == nullptr) p = allocate_block(bytes);
  if (p != nullptr) in_use_.fetch_add(bytes, std::memory_order_relaxed);
  return p;
}

void* HostDevice::allocate(std::size_t bytes) {
  if (void* p = try_allocate(bytes)) return p;
  throw Error("host cannot allocate " + format_bytes(bytes) + ": " + format_bytes(bytes_in_use()) + " of " +
              format_bytes(capacity_) + " in use by tessera");
}

void HostDevice::deallocate(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
  if (bytes >= reuse_at_least && bytes <= reuse_at_most) {
    std::vector<std::pair<std::size_t, void*>> dropped;
    {
      std::lock_guard lock(reuse_mutex_);
      reusable_.emplace_back(bytes, p);
      reusable_bytes_ += bytes;
      while (reusable_bytes_ > reuse_at_most || reusable_.size() > reuse_blocks) {
        dropped.push_back(reusable_.front());
        reusable_bytes_ -= reusable_.front().first;
        reusable_.erase(reusable_.begin());
      }
    }
    for (auto& [dropped_bytes, block] : dropped) free_block(block, dropped_bytes);
    return;
  }
  free_block(p, bytes);
}

void HostDevice::copy_async(void* dst, const void* src, std::size_t bytes, CopyDirection, Stream& stream) {
  stream.enqueue_host([=] { std::memcpy(dst, src, bytes); });
}

}  // namespace tessera::detail
