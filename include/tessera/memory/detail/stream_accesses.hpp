#pragma once
// Internal: Buffer accesses prepared on one stream for one piece of device work (a device block
// of for_each, a device node of an AccessGraph, a GPU-kind task), finished together once the
// work is enqueued, and finished on every exit path, so that an exception between prepare and
// finish leaves the buffers usable. The device-side twin of HostHolds.

#include <tessera/device/stream.hpp>
#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <cstddef>
#include <exception>
#include <array>
#include <vector>

namespace tessera::detail {

class StreamAccesses {
 public:
  StreamAccesses(std::size_t space, Stream& stream) : space_(space), stream_(stream) {}
  StreamAccesses(const StreamAccesses&) = delete;
  StreamAccesses& operator=(const StreamAccesses&) = delete;
  ~StreamAccesses() {
    for (std::size_t i = 0; i < count_; ++i) {
      try {
        end(i);
      } catch (...) {  // already unwinding from the error that matters
      }
    }
  }

  /// `rows` of `b` valid in this space for work enqueued next on the stream; returns the base.
  /// `b` must outlive the accesses.
  std::byte* prepare(Buffer& b, Access mode, RowRange rows) {
    void* p = b.prepare(space_, stream_, mode, rows);
    const Open o{&b, mode, rows};
    if (count_ < inline_.size())
      inline_[count_] = o;
    else
      overflow_.push_back(o);
    ++count_;
    return static_cast<std::byte*>(p);
  }
  std::byte* prepare(Buffer& b, Access mode) { return prepare(b, mode, b.all()); }

  /// The work is enqueued: ends every access (in the order prepared), then rethrows the first
  /// failure among them, if any.
  void finish() {
    std::exception_ptr first;
    for (std::size_t i = 0; i < count_; ++i) {
      try {
        end(i);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    count_ = 0;
    overflow_.clear();
    if (first) std::rethrow_exception(first);
  }

 private:
  struct Open {
    Buffer* buffer;
    Access mode;
    RowRange rows;
  };
  void end(std::size_t i) {
    const Open& o = i < inline_.size() ? inline_[i] : overflow_[i - inline_.size()];
    o.buffer->finish(space_, stream_, o.mode, o.rows);
  }

  std::size_t space_;
  Stream& stream_;
  // A task or block rarely touches more buffers than this: no allocation on the launch path.
  std::array<Open, 8> inline_{};
  std::vector<Open> overflow_;
  std::size_t count_ = 0;
};

}  // namespace tessera::detail
