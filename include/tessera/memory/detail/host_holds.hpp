#pragma once
// Internal: host holds on several Buffers for one piece of work (a CPU block of for_each, a host
// node of an AccessGraph), released on every exit path so that an exception between request and
// release leaves the buffers usable.

#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <cstddef>
#include <tuple>
#include <vector>

namespace tessera::detail {

class HostHolds {
 public:
  HostHolds() = default;
  HostHolds(const HostHolds&) = delete;
  HostHolds& operator=(const HostHolds&) = delete;
  ~HostHolds() {
    for (const auto& [buffer, mode, rows] : held_) {
      try {
        buffer->release(mode, rows);
      } catch (...) {  // only fails without the hold, which hold() took
      }
    }
  }
  /// Requests `rows` of `b` for the host and waits for them; `b` must outlive the holds.
  std::byte* hold(Buffer& b, Access mode, RowRange rows) {
    void* p = b.request(mode, rows).get();
    held_.emplace_back(&b, mode, rows);
    return static_cast<std::byte*>(p);
  }
  std::byte* hold(Buffer& b, Access mode) { return hold(b, mode, b.all()); }

 private:
  std::vector<std::tuple<Buffer*, Access, RowRange>> held_;
};

}  // namespace tessera::detail
