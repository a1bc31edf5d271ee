#include "large_pages.hpp"

#include <cstdint>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

}  // namespace

#if defined(__linux__)

namespace {
std::size_t mapped_length(std::size_t bytes) noexcept {
  return (bytes + large_page_bytes - 1) / large_page_bytes * large_page_bytes;
}
}  // namespace

bool uses_large_pages(std::size_t bytes) noexcept { return !sanitized && bytes >= large_page_bytes; }

void* map_large_pages(std::size_t bytes) noexcept {
  // The round-up and the extra page below must not wrap around.
  if (bytes > std::numeric_limits<std::size_t>::max() - 2 * large_page_bytes) return nullptr;
  const std::size_t length = mapped_length(bytes);
  // Map one large page more than needed, then give back the unaligned head and the tail.
  void* raw = ::mmap(nullptr, length + large_page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (begin + large_page_bytes - 1) / large_page_bytes * large_page_bytes;
  if (aligned > begin) ::munmap(raw, aligned - begin);
  const std::uintptr_t end = begin + length + large_page_bytes;
  if (end > aligned + length) ::munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  // Advice only: where transparent huge pages are off, the block is ordinary memory.
  ::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

void unmap_large_pages(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) ::munmap(p, mapped_length(bytes));
}

#else

bool uses_large_pages(std::size_t) noexcept { return false; }
void* map_large_pages(std::size_t) noexcept { return nullptr; }
void unmap_large_pages(void*, std::size_t) noexcept {}

#endif

}  // namespace tessera::detail
