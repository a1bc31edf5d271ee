#pragma once
// Dataset<T>: a field on a Block (OPS's ops_dat): its size, the global index of its first
// interior element (base), and halo depths below (d_m, zero or negative as in OPS) and above
// (d_p). Stored in one Buffer whose rows are the outermost dimension, so the memory layer keeps
// each device's rows coherent and moves only the rows a later loop reads that another side wrote.

#include <tessera/core/error.hpp>
#include <tessera/layout/layout.hpp>
#include <tessera/layout/layout_traits.hpp>
#include <tessera/layout/record.hpp>
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
[[noreturn]] void throw_record_on_1d(const std::string& dataset);
}  // namespace detail

///   tessera::loops::Dataset<double> u(block, {.size = {20, 20}, .d_m = {-1, -1}, .d_p = {1, 1}}, "u");
///
/// A Record type (docs/layout.md) is stored in layout L along x: `Contiguous` (AoS), `Strided`
/// (SoA: each member's run along a line of sites, what GPUs and SIMD want) or `Tiled<V>`; a
/// kernel gets views of its sites, `tl::Acc<Particle<double>, tessera::Strided>`, and the layout
/// never changes results. Any other T is stored as a plain array whatever L.
template <typename T, Layout L = Contiguous>
class Dataset {
  static_assert(std::is_trivially_copyable_v<T>, "a Dataset holds trivially copyable elements");

 public:
  using value_type = T;
  using layout = L;
  /// Whether T is a Record stored through LayoutTraits<T, L> (else a plain array of T).
  static constexpr bool is_record = RecordType<T>;

  Dataset(Block& block, const Shape& shape, std::string name = "dataset")
      : block_(&block),
        name_(std::move(name)),
        shape_(detail::checked_shape(name_, block.dims(), shape)),
        buffer_(block.context().memory(), std::size_t(padded(block.dims() - 1)), row_bytes(), checked_name()) {
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
  /// The bytes of the whole padded array as stored (a Record's lines rounded as its layout wants).
  std::size_t bytes() const noexcept { return buffer_.rows() * row_bytes(); }
  /// A line of sites along x as stored: its bytes, and the sites it holds (its pitch).
  std::size_t line_bytes() const noexcept {
    if constexpr (is_record)
      return LayoutTraits<T, L>::row_bytes(std::size_t(padded(0)));
    else
      return sizeof(T) * std::size_t(padded(0));
  }
  std::size_t pitch() const noexcept {
    if constexpr (is_record)
      return LayoutTraits<T, L>::row_sites(std::size_t(padded(0)));
    else
      return std::size_t(padded(0));
  }
  /// Bytes per site moved by a loop (a Record's members, without the layout's padding).
  static constexpr std::size_t site_bytes() noexcept {
    if constexpr (is_record)
      return LayoutTraits<T, L>::site_bytes;
    else
      return sizeof(T);
  }

  /// Position of global index (i, j, k) in the padded array (fetch() order).
  std::size_t index(int i, int j = 0, int k = 0) const noexcept {
    const auto s = strides();
    return std::size_t((i - first(0)) * s[0] + (j - first(1)) * s[1] + (k - first(2)) * s[2]);
  }

  /// Runs the recorded loops, then copies the whole padded array to the host.
  std::vector<T> fetch() {
    block_->context().execute();
    std::vector<T> out(elements());
    auto* stored = static_cast<std::byte*>(buffer_.request(Access::read).get());
    if constexpr (is_record) {
      for_each_line([&](std::size_t line, std::size_t first) {
        for (int x = 0; x < padded(0); ++x)
          out[first + std::size_t(x)] = LayoutTraits<T, L>::read_at(stored + line, x, std::ptrdiff_t(pitch()));
      });
    } else {
      std::memcpy(out.data(), stored, bytes());
    }
    buffer_.release(Access::read);
    return out;
  }
  /// Runs the recorded loops, then overwrites the whole padded array from `values` (fetch() order).
  void assign(const std::vector<T>& values) {
    if (values.size() != elements())
      throw Error("Dataset '" + name_ + "': assign got " + std::to_string(values.size()) + " values for " +
                  std::to_string(elements()) + " elements (size plus halos); pass one per element");
    block_->context().execute();
    auto* stored = static_cast<std::byte*>(buffer_.request(Access::write).get());
    if constexpr (is_record) {
      for_each_line([&](std::size_t line, std::size_t first) {
        for (int x = 0; x < padded(0); ++x)
          LayoutTraits<T, L>::at(stored + line, x, std::ptrdiff_t(pitch())) = values[first + std::size_t(x)];
      });
    } else {
      std::memcpy(stored, values.data(), bytes());
    }
    buffer_.release(Access::write);
  }

 private:
  /// A buffer row: one index of the outermost dimension (a site in 1-D, a line in 2-D, a plane).
  std::size_t row_bytes() const noexcept {
    if (block_->dims() == 1) return sizeof(T);
    return line_bytes() * (block_->dims() == 3 ? std::size_t(padded(1)) : 1);
  }
  /// Calls f(byte offset of the line, fetch() index of its first site) for every stored line.
  template <typename F>
  void for_each_line(F&& f) const {
    const std::size_t lines = std::size_t(padded(1)) * std::size_t(padded(2));
    for (std::size_t l = 0; l < lines; ++l) f(l * line_bytes(), l * std::size_t(padded(0)));
  }
  const std::string& checked_name() const {
    if (is_record && block_->dims() == 1) detail::throw_record_on_1d(name_);
    return name_;
  }

  Block* block_;
  std::string name_;
  Shape shape_;
  Buffer buffer_;
};

}  // namespace tessera::loops
