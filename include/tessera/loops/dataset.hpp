#pragma once
// Dataset<T>: a field on a Block (OPS's ops_dat): its size, the global index of its first
// interior element (base), and halo depths below (d_m, zero or negative as in OPS) and above
// (d_p). Stored in one Buffer whose rows are the outermost dimension, so the memory layer keeps
// each device's rows coherent and moves only the rows a later loop reads that another side wrote.

#include <tessera/core/error.hpp>
#include <tessera/loops/block.hpp>
#include <tessera/memory/buffer.hpp>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::loops {

/// Per dimension (unused ones: size 1, base 0, no halo).
struct Shape {
  std::array<int, 3> size{1, 1, 1};
  std::array<int, 3> base{0, 0, 0};
  std::array<int, 3> d_m{0, 0, 0};
  std::array<int, 3> d_p{0, 0, 0};
};

namespace detail {
/// `s`, after checking it is valid for a block of `dims` dimensions (else tessera::Error).
const Shape& checked_shape(const std::string& dataset, int dims, const Shape& s);
}  // namespace detail

///   tessera::loops::Dataset<double> u(block, {.size = {20, 20}, .d_m = {-1, -1}, .d_p = {1, 1}}, "u");
template <typename T>
class Dataset {
  static_assert(std::is_trivially_copyable_v<T>, "a Dataset holds trivially copyable elements");

 public:
  using value_type = T;

  Dataset(Block& block, const Shape& shape, std::string name = "dataset")
      : block_(&block), name_(std::move(name)), shape_(detail::checked_shape(name_, block.dims(), shape)),
        buffer_(block.context().memory(), std::size_t(padded(block.dims() - 1)), sizeof(T) * inner_elements(), name_) {
    std::memset(buffer_.request(Access::write).get(), 0, bytes());
    buffer_.release();
  }

  Block& block() const noexcept { return *block_; }
  int dims() const noexcept { return block_->dims(); }
  const Shape& shape() const noexcept { return shape_; }
  const std::string& name() const noexcept { return name_; }
  Buffer& buffer() noexcept { return buffer_; }

  /// Allocated extent in dimension d (size plus both halos).
  int padded(int d) const noexcept { return shape_.size[d] - shape_.d_m[d] + shape_.d_p[d]; }
  /// Lowest and one past the highest global index allocated in dimension d.
  int first(int d) const noexcept { return shape_.base[d] + shape_.d_m[d]; }
  int last(int d) const noexcept { return first(d) + padded(d); }
  std::array<std::ptrdiff_t, 3> strides() const noexcept {
    return {1, std::ptrdiff_t(padded(0)), std::ptrdiff_t(padded(0)) * padded(1)};
  }
  std::size_t elements() const noexcept { return std::size_t(padded(0)) * padded(1) * padded(2); }
  std::size_t bytes() const noexcept { return elements() * sizeof(T); }

  /// Position of global index (i, j, k) in the padded array (fetch() order).
  std::size_t index(int i, int j = 0, int k = 0) const noexcept {
    const auto s = strides();
    return std::size_t((i - first(0)) * s[0] + (j - first(1)) * s[1] + (k - first(2)) * s[2]);
  }

  /// Runs the recorded loops, then copies the whole padded array to the host.
  std::vector<T> fetch() {
    block_->context().execute();
    std::vector<T> out(elements());
    std::memcpy(out.data(), buffer_.request(Access::read).get(), bytes());
    buffer_.release(Access::read);
    return out;
  }
  /// Runs the recorded loops, then overwrites the whole padded array from `values` (fetch() order).
  void assign(const std::vector<T>& values) {
    if (values.size() != elements())
      throw Error("Dataset '" + name_ + "': assign got " + std::to_string(values.size()) + " values for " +
                  std::to_string(elements()) + " elements (size plus halos); pass one per element");
    block_->context().execute();
    std::memcpy(buffer_.request(Access::write).get(), values.data(), bytes());
    buffer_.release(Access::write);
  }

 private:
  std::size_t inner_elements() const noexcept {
    std::size_t n = 1;
    for (int d = 0; d + 1 < block_->dims(); ++d) n *= std::size_t(padded(d));
    return n;
  }

  Block* block_;
  std::string name_;
  Shape shape_;
  Buffer buffer_;
};

}  // namespace tessera::loops
