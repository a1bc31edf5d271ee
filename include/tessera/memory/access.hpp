#pragma once
// How a kernel or the host touches a Buffer. The memory layer derives copies and validity from
// it; front ends derive dependencies from it.

#include <cstdint>
#include <string_view>

namespace tessera {

/// read: needs current values, changes nothing. write: overwrites every row it names without
/// reading them (no copy in). read_write: reads current values and changes them. reduce:
/// combines into current values; for coherence it is read_write (the replica must hold the
/// values the reduction combines into, and becomes the only valid one). Running reduce accesses
/// to disjoint partial results concurrently is a scheduler's decision, not the Buffer's.
///
///   void* p = buffer.prepare(space, stream, tessera::Access::read_write, {0, n});
enum class Access : std::uint8_t { read, write, read_write, reduce };

constexpr std::string_view to_string(Access a) noexcept {
  switch (a) {
    case Access::read:
      return "read";
    case Access::write:
      return "write";
    case Access::read_write:
      return "read_write";
    case Access::reduce:
      return "reduce";
  }
  return "?";
}

/// Whether the access needs the current values (everything but write).
constexpr bool access_reads(Access a) noexcept { return a != Access::write; }
/// Whether the access changes values (everything but read).
constexpr bool access_writes(Access a) noexcept { return a != Access::read; }

}  // namespace tessera
