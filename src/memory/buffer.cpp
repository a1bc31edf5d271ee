#include "buffer_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/buffer.hpp>

#include <limits>

namespace tessera {

Buffer::Buffer(MemoryManager& manager, std::size_t rows, std::size_t row_bytes, std::string name) {
  if (rows == 0 || row_bytes == 0)
    throw Error("Buffer '" + name + "': " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                " bytes hold nothing; give at least one row of at least one byte");
  if (rows > std::numeric_limits<std::size_t>::max() / row_bytes)
    throw Error("Buffer '" + name + "': " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                " bytes overflow a 64-bit byte count; check the sizes");
  state_ = std::make_shared<detail::BufferState>(manager.core_, rows, row_bytes, std::move(name));
}

detail::BufferState& Buffer::state() const {
  if (!state_) throw Error("this Buffer was moved from; use the handle it was moved to (copies share one array)");
  return *state_;
}

const std::string& Buffer::name() const { return state().name; }
std::size_t Buffer::rows() const { return state().rows; }
std::size_t Buffer::row_bytes() const { return state().row_bytes; }
std::size_t Buffer::bytes() const { return state().bytes; }

void* Buffer::prepare(std::size_t space, Stream& stream, Access mode, RowRange rows) {
  return state().prepare(space, stream, mode, rows);
}

void Buffer::finish(std::size_t space, Stream& stream, Access mode, RowRange rows) {
  state().finish(space, stream, mode, rows);
}

std::future<void*> Buffer::request(Access mode, RowRange rows) { return state().request(mode, rows); }
void Buffer::release() { state().release(); }
void Buffer::release(Access mode, RowRange rows) { state().release(mode, rows); }
RowRanges Buffer::valid_rows(std::size_t space) const { return state().valid_rows(space); }
bool Buffer::has_replica(std::size_t space) const { return state().has_replica(space); }
TransferStats Buffer::bytes_transferred() const { return state().transferred(); }
void* Buffer::host_if_sole() const noexcept { return state_ ? state_->host_if_sole() : nullptr; }

}  // namespace tessera
