#pragma once
// Host memory for large blocks: mapped on its own, aligned to 2 MiB and offered to the kernel's
// transparent huge pages (madvise). Tensor kernels stream through such blocks; with 4 KiB pages
// a row of several component runs crosses many page boundaries, and every crossing costs a TLB
// miss and restarts the hardware prefetcher. Measured on the 2-core VM: per-row SoA particles
// with 4 KiB pages ran at 0.78 of one long SoA array, with huge pages at 0.92.

#include <cstddef>

namespace tessera::detail {

inline constexpr std::size_t large_page_bytes = std::size_t{2} << 20;

/// Whether a block of `bytes` is mapped with map_large_pages (and so freed with
/// unmap_large_pages). Off under AddressSanitizer, which checks only the allocators it wraps.
bool uses_large_pages(std::size_t bytes) noexcept;
/// At least `bytes` aligned to large_page_bytes; nullptr if the system refuses the mapping.
void* map_large_pages(std::size_t bytes) noexcept;
/// Frees a block of `bytes` from map_large_pages.
void unmap_large_pages(void* p, std::size_t bytes) noexcept;

}  // namespace tessera::detail
