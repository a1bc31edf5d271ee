// Storage of flow::Array: one Buffer in the flow's memory, written once.

#include "engine.hpp"

#include <fmt/format.h>
#include <tessera/core/error.hpp>
#include <tessera/flow/array.hpp>

#include <cstring>
#include <limits>

namespace tessera::flow::detail {

Buffer make_array_buffer(Flow& flow, std::size_t rows, std::size_t row_bytes, const char* what) {
  if (rows != 0 && row_bytes > std::numeric_limits<std::size_t>::max() / rows)
    throw Error(fmt::format("{}: {} rows of {} bytes overflow the address space", what, rows, row_bytes));
  return Buffer(flow.memory(), rows, row_bytes, what);
}

void write_host(Buffer& b, const void* src, std::size_t bytes) {
  void* dst = b.request(Access::write).get();
  std::memcpy(dst, src, bytes);
  b.release(Access::write);
}

void read_host(const Buffer& b, void* dst, std::size_t bytes) {
  Buffer h = b;
  if (const void* p = h.host_if_sole(); p != nullptr) {
    std::memcpy(dst, p, bytes);
    return;
  }
  const void* src = h.request(Access::read).get();
  std::memcpy(dst, src, bytes);
  h.release(Access::read);
}

void throw_shape(const std::string& what, std::size_t expected, std::size_t got) {
  throw Error(fmt::format("{}: expected {} values, got {}", what, expected, got));
}

}  // namespace tessera::flow::detail
