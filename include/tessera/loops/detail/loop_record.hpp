#pragma once
// Internal: one recorded loop as the chain sees it: the datasets it touches (Buffer, access, the
// rows its stencils reach along the outermost dimension) and a body that runs a slab of its
// outermost range given each dataset's base where the slab runs.

#include <tessera/loops/block.hpp>
#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera {
class Stream;
}

namespace tessera::loops::detail {

struct DatUse {
  Buffer buffer;
  Access access;
  int low, high;  // the stencil's reach along the outermost dimension
  int first_row;  // global outermost index of the buffer's row 0
  // How a site's outermost index maps to the dataset's (strided stencils): i * stride, or
  // floor(i / stride) when `divide`.
  int stride = 1;
  bool divide = false;

  bool maps_identity() const noexcept { return stride == 1; }
  int map(int i) const noexcept {
    if (!divide) return i * stride;
    const int q = i / stride;
    return (i % stride != 0 && i < 0) ? q - 1 : q;
  }
  /// The buffer rows sites [begin, end) of the outermost dimension reach.
  RowRange rows(int begin, int end) const noexcept {
    return {std::size_t(map(begin) + low - first_row), std::size_t(map(end - 1) + high - first_row + 1)};
  }
};

struct LoopRecord {
  LoopRecord(std::string n, int d, Range r) : name(std::move(n)), dims(d), range(r) {}
  virtual ~LoopRecord() = default;
  /// Runs the sites whose outermost index is in [begin, end); bases[i] is dats[i]'s row 0.
  virtual void run(int begin, int end, void* const* bases) = 0;
  /// Launches the same slab as a GPU kernel on `stream`, a CUDA stream (bases: device rows 0).
  /// With `timer`, sets it to what gives the kernel's device time in seconds once the stream has
  /// passed it. Throws tessera::Error where nvcc did not compile the file that recorded the loop.
  virtual void launch_cuda(Stream& stream, int begin, int end, void* const* bases, std::function<double()>* timer) = 0;
  /// After every slab ran: reductions combine their rows, in order, into their handles.
  virtual void finish() {}

  int outer_begin() const noexcept { return range.begin[dims - 1]; }
  int outer_end() const noexcept { return range.end[dims - 1]; }

  std::string name;
  int dims;
  Range range;
  std::vector<DatUse> dats;
  /// Whether it reduces into a handle: its sites must then run exactly once.
  bool reduces = false;
  /// What the loop must move through memory at the least: each dataset argument's elements over
  /// the range once per direction (read, written, or both), as OPS counts effective bandwidth.
  std::uint64_t bytes_required = 0;
};

}  // namespace tessera::loops::detail
