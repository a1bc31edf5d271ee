#pragma once
// flow::Array: the immutable values that travel through a dataflow (Alea §2.2). An Array is a
// cheap handle to one Buffer: copying it shares the data, the data is copied to a device only
// when a firing there reads it (and at most once per device, since the Buffer then holds a valid
// replica), and device memory is freed when the last handle and the last firing using it are
// gone. Scalars and tuples travel as plain values; Array<T, 0> is a scalar that may live on a
// device (a reduction's result).

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/memory/buffer.hpp"

namespace tessera::flow {

class Flow;

namespace detail {
/// Makes the Buffer of an array: one row per index of the outermost dimension (the unit of
/// copies), or one row for a 0-d array. Throws tessera::Error when the size overflows.
Buffer make_array_buffer(Flow& flow, std::size_t rows, std::size_t row_bytes, const char* what);
/// Copies `bytes` from `src` into the host replica of `b` (a write of every row).
void write_host(Buffer& b, const void* src, std::size_t bytes);
/// Copies the whole of `b` to `dst` on the host, waiting for device work that produces it.
void read_host(const Buffer& b, void* dst, std::size_t bytes);
[[noreturn]] void throw_shape(const std::string& what, std::size_t expected, std::size_t got);
}  // namespace detail

/// An immutable D-dimensional array of T, stored row-major (the last index fastest).
///
///   flow::Array<double, 2> m(f, {3, 4}, values);   // 12 values, copied in
///   std::vector<double> back = m.to_vector();     // waits for whatever produces it
template <typename T, std::size_t D = 1>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "flow::Array holds trivially copyable elements");

 public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using Shape = std::array<std::size_t, D>;

  /// An empty array (size 0, no storage).
  Array() = default;

  /// A copy of `values` (row-major, size = product of `shape`). Throws tessera::Error when the
  /// counts differ.
  Array(Flow& flow, Shape shape, std::span<const T> values) : Array(flow, shape) {
    if (values.size() != size()) detail::throw_shape("flow::Array: the values given", size(), values.size());
    if (buffer_) detail::write_host(*buffer_, values.data(), bytes());
  }
  /// A 1-d copy of `values`.
  Array(Flow& flow, std::span<const T> values) requires(D == 1) : Array(flow, Shape{values.size()}, values) {}
  Array(Flow& flow, const std::vector<T>& values) requires(D == 1)
      : Array(flow, Shape{values.size()}, std::span<const T>(values)) {}
  /// A 0-d array holding `value`.
  Array(Flow& flow, T value) requires(D == 0) : Array(flow, Shape{}, std::span<const T>(&value, 1)) {}

  const Shape& shape() const noexcept { return shape_; }
  std::size_t extent(std::size_t d) const { return shape_[d]; }
  std::size_t size() const noexcept {
    std::size_t n = 1;
    for (std::size_t e : shape_) n *= e;
    return n;
  }
  std::size_t bytes() const noexcept { return size() * sizeof(T); }
  bool empty() const noexcept { return size() == 0; }

  /// The values, on the host (waits for the firing that produced them, copies from its device).
  std::vector<T> to_vector() const {
    std::vector<T> out(size());
    if (buffer_) detail::read_host(*buffer_, out.data(), bytes());
    return out;
  }
  /// The value of a 0-d array.
  T value() const requires(D == 0) {
    T v{};
    if (buffer_) detail::read_host(*buffer_, &v, sizeof(T));
    return v;
  }

  /// The Buffer behind the array (null for an empty array): for placement and lazy copies.
  const Buffer* buffer() const noexcept { return buffer_ ? &*buffer_ : nullptr; }
  Buffer* buffer() noexcept { return buffer_ ? &*buffer_ : nullptr; }

  /// An array of `shape` with storage but no values yet: what a firing allocates for its output
  /// (flow::Context::allocate), written once by that firing.
  static Array uninitialised(Flow& flow, Shape shape) { return Array(flow, shape); }

 private:
  Array(Flow& flow, Shape shape) : shape_(shape) {
    if (size() == 0) return;
    const std::size_t rows = D == 0 ? 1 : shape_[0];
    buffer_.emplace(detail::make_array_buffer(flow, rows, bytes() / rows, "flow::Array"));
  }
  Shape shape_{};
  std::optional<Buffer> buffer_;
};

template <typename T>
using Scalar = Array<T, 0>;
template <typename T>
using Vector = Array<T, 1>;
template <typename T>
using Matrix = Array<T, 2>;

template <typename A>
inline constexpr bool is_array_v = false;
template <typename T, std::size_t D>
inline constexpr bool is_array_v<Array<T, D>> = true;

}  // namespace tessera::flow
