#pragma once
// Checkpoint and restart: one tensor plus named scalars (time, step, dt, anything else) in one
// file, restored bit-identically into a tensor of the same sizes with any partitioning, layout or
// devices, since both sides go through the dense host array of gather_to / fill_from.
//
//   tessera::io::CheckpointScalars s;
//   s.set("time", t);  s.set("step", step);  s.set("dt", dt);
//   tessera::io::save_checkpoint("run.ckpt", state, s);
//   ...
//   auto r = tessera::io::load_checkpoint("run.ckpt", state);   // same sizes, any layout
//   double t = r.real("time");  std::int64_t step = r.integer("step");
//
// The format is tessera's own, needs no library, and is described in docs/io.md: a fixed header
// (magic, version, byte order, element size, dimensions, lengths, two checksums), then the sizes,
// the element type's signature and the scalars, then the raw bytes of the dense array. A bad file
// (not found, wrong magic or version, truncated, corrupt, another element type or size, other
// sizes) and a missing scalar raise tessera::Error naming the file and what was wrong. Saving
// writes `path.partial` and renames it over `path`, so a crash mid-write keeps the old checkpoint.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tessera/layout/record.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera::io {

/// Named numbers saved with a checkpoint: reals (double) and integers (int64).
///
///   CheckpointScalars s;  s.set("time", 0.25);  s.set("step", 100);
///   double t = s.real("time");
class CheckpointScalars {
 public:
  using Value = std::variant<double, std::int64_t>;

  void set(const std::string& name, double value) { set_value(name, value); }
  template <std::integral I>
  void set(const std::string& name, I value) {
    set_value(name, static_cast<std::int64_t>(value));
  }
  /// The real `name` (an integer is converted). Throws tessera::Error, naming the checkpoint file
  /// it came from and the names it does have, when there is no such scalar.
  double real(const std::string& name) const;
  /// The integer `name`. Throws tessera::Error when it is missing or was saved as a real.
  std::int64_t integer(const std::string& name) const;
  bool contains(const std::string& name) const { return values_.count(name) != 0; }
  /// Every name, sorted.
  std::vector<std::string> names() const;
  const std::map<std::string, Value>& values() const { return values_; }
  /// The file these were loaded from ("" when built in memory), named in errors.
  const std::string& source() const { return source_; }

 private:
  friend struct CheckpointAccess;
  void set_value(const std::string& name, Value value);
  const Value& find(const std::string& name) const;
  std::map<std::string, Value> values_;
  std::string source_;
};

/// What a checkpoint holds, read from its header without reading the array.
struct CheckpointInfo {
  std::vector<std::size_t> sizes;  ///< interior sizes, x first
  std::size_t element_size = 0;    ///< bytes per site
  std::string element_type;        ///< the element's signature, e.g. "f64" or "record{f64x4}"
  CheckpointScalars scalars;
};

namespace detail {

template <typename S>
std::string checkpoint_scalar_code() {
  if constexpr (std::is_same_v<S, bool>) {
    return "bool";
  } else {
    const char kind = std::is_floating_point_v<S> ? 'f' : (std::is_signed_v<S> ? 'i' : 'u');
    return kind + std::to_string(8 * sizeof(S));
  }
}

template <typename Desc, std::size_t... Is>
std::string checkpoint_record_signature(std::index_sequence<Is...>) {
  std::string s = "record{";
  ((s += (Is ? "," : "") + checkpoint_scalar_code<typename Desc::template scalar<Is>>() +
         (Desc::template is_vector<Is> ? "x" + std::to_string(Desc::template count<Is>) : "")),
   ...);
  return s + "}";
}

/// The element type as written in the file, so a restore into another type is refused even when
/// the sizes agree (f32 vs i32).
template <typename T>
std::string checkpoint_signature() {
  if constexpr (std::is_arithmetic_v<T>) {
    return checkpoint_scalar_code<T>();
  } else {
    using Desc = typename T::descriptor;
    return checkpoint_record_signature<Desc>(std::make_index_sequence<Desc::members>{});
  }
}

struct CheckpointShape {
  std::vector<std::size_t> sizes;
  std::size_t element_size = 0;
  std::string element_type;
};

template <typename T, std::size_t D>
CheckpointShape checkpoint_shape(const Extent<D>& sizes) {
  static_assert(std::is_trivially_copyable_v<T>, "a checkpointed element type must be trivially copyable");
  CheckpointShape shape{std::vector<std::size_t>(D), sizeof(T), checkpoint_signature<T>()};
  for (std::size_t d = 0; d < D; ++d) shape.sizes[d] = sizes[d];
  return shape;
}

void write_checkpoint(const std::string& path, const CheckpointShape& shape, std::span<const std::byte> data,
                      const CheckpointScalars& scalars);
CheckpointScalars read_checkpoint(const std::string& path, const CheckpointShape& expected,
                                  std::span<std::byte> data);

}  // namespace detail

/// Writes the tensor's interior and `scalars` to `path` (replacing it). T is arithmetic or an
/// owned Record type. A distributed tensor is gathered and written by rank 0, in the same format
/// (so it restarts on any number of ranks); the call is collective and throws on every rank when
/// rank 0 could not write.
///
///   save_checkpoint("run.ckpt", state, scalars);
template <typename T, std::size_t D, Layout L>
void save_checkpoint(const std::string& path, const Tensor<T, D, L>& tensor, const CheckpointScalars& scalars = {}) {
  // Value-initialised, so padding bytes inside a Record are zero and equal states give equal files.
  std::vector<T> dense(tensor.size().volume());
  tensor.gather_to(dense.data());
  Ranks* ranks = tensor.ranks();
  if (ranks == nullptr) {
    detail::write_checkpoint(path, detail::checkpoint_shape<T>(tensor.size()), std::as_bytes(std::span(dense)),
                             scalars);
    return;
  }
  std::exception_ptr failure;
  if (ranks->rank() == 0) {
    try {
      detail::write_checkpoint(path, detail::checkpoint_shape<T>(tensor.size()), std::as_bytes(std::span(dense)),
                               scalars);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Every rank learns whether the file exists before any of them goes on (and, say, restarts).
  const std::int64_t written = failure ? 0 : 1;
  std::vector<std::int64_t> all(static_cast<std::size_t>(ranks->size()));
  all_gather(*ranks, tensor.collective_channel(), &written, sizeof written, all.data());
  if (failure) std::rethrow_exception(failure);
  if (all[0] == 0)
    throw Error("checkpoint '" + path + "' of distributed tensor '" + tensor.name() +
                "': rank 0, which writes it, failed (its error says why)");
}

/// Restores the tensor's interior from `path` and returns the saved scalars. The tensor must have
/// the sizes and element type it was saved with; its partitioning, layout and devices may differ.
/// Padding is not saved: call load_boundary / exchange_padding after, as after any fill_from.
/// Each rank of a distributed tensor reads the file and keeps its part.
///
///   CheckpointScalars s = load_checkpoint("run.ckpt", state);
template <typename T, std::size_t D, Layout L>
CheckpointScalars load_checkpoint(const std::string& path, Tensor<T, D, L>& tensor) {
  std::vector<T> dense(tensor.size().volume());
  CheckpointScalars scalars = detail::read_checkpoint(path, detail::checkpoint_shape<T>(tensor.size()),
                                                      std::as_writable_bytes(std::span(dense)));
  tensor.fill_from(dense.data());
  return scalars;
}

/// Reads the header of a checkpoint: its sizes, element type and scalars (to size a tensor
/// before restoring into it). Throws tessera::Error for the same bad files as load_checkpoint.
///
///   CheckpointInfo info = inspect_checkpoint("run.ckpt");   // info.sizes == {nx, ny}
CheckpointInfo inspect_checkpoint(const std::string& path);

}  // namespace tessera::io
