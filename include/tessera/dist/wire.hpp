#pragma once
// Writer and Reader: the byte form of handler arguments and of migrating objects. Trivially
// copyable values, std::vector and std::string of them are built in; a type that is not
// trivially copyable gives itself `void pack(Writer&) const` and `static T unpack(Reader&)`.
// Arrays are stored aligned for their element type (relative to the start of the bytes, which
// the runtime keeps 16-byte aligned), so a handler may take `std::span<const T>` and read the
// message in place, without a copy.

#include <tessera/core/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::dist {

class Writer;
class Reader;

namespace detail {
template <class T>
struct is_span : std::false_type {};
template <class T, std::size_t E>
struct is_span<std::span<T, E>> : std::true_type {};
}  // namespace detail

template <class T>
concept SelfPacking = requires(const T& t, Writer& w, Reader& r) {
  t.pack(w);
  { T::unpack(r) } -> std::same_as<T>;
};

/// Appends values to a byte vector.
class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(&out) {}

  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_->insert(out_->end(), p, p + n);
  }
  /// Pads with zeros to a multiple of `a` bytes from the start of the vector.
  void align(std::size_t a) { out_->resize((out_->size() + a - 1) / a * a); }

  template <class T>
  void put(const T& value) {
    if constexpr (SelfPacking<T>) {
      value.pack(*this);
    } else if constexpr (detail::is_span<T>::value) {
      put_container(std::span<const typename T::value_type>(value));
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      bytes(&value, sizeof(T));
    } else {
      put_container(value);
    }
  }

 private:
  template <class T>
  void put_container(const std::vector<T>& v) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      put_container(std::span<const T>(v));
    } else {
      put<std::uint64_t>(v.size());
      for (const auto& x : v) put(x);
    }
  }
  template <class T>
  void put_container(std::span<const T> v) {
    static_assert(std::is_trivially_copyable_v<T>, "a span argument is of trivially copyable values");
    put<std::uint64_t>(v.size());
    align(alignof(T));
    bytes(v.data(), v.size_bytes());
  }
  template <class T>
  void put_container(std::span<T> v) {
    put_container(std::span<const T>(v));
  }
  void put_container(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  template <class T>
  void put_container(const T&) {
    static_assert(sizeof(T) == 0,
                  "tessera::dist: a handler argument or mobile object must be trivially copyable, a std::vector or "
                  "std::string of such, or give itself pack(Writer&) const and static unpack(Reader&)");
  }

  std::vector<std::byte>* out_;
};

/// Reads values back in the order they were written. Throws tessera::Error when the bytes run
/// out (a message shorter than its handler's arguments).
class Reader {
 public:
  Reader(const std::byte* data, std::size_t size) : base_(data), p_(data), end_(data + size) {}

  /// Skips the padding Writer::align wrote.
  void align(std::size_t a) {
    const auto at = static_cast<std::size_t>(p_ - base_);
    skip((at + a - 1) / a * a - at);
  }

  void bytes(void* out, std::size_t n) {
    need(n);
    std::memcpy(out, p_, n);
    p_ += n;
  }

  template <class T>
  T get() {
    if constexpr (SelfPacking<T>) {
      return T::unpack(*this);
    } else if constexpr (detail::is_span<T>::value) {
      static_assert(std::is_const_v<typename T::element_type>, "a handler reads a span argument as std::span<const T>");
      return get_container(static_cast<std::span<typename T::element_type>*>(nullptr));
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      T value;
      bytes(&value, sizeof(T));
      return value;
    } else {
      return get_container(static_cast<T*>(nullptr));
    }
  }

  std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  const std::byte* position() const noexcept { return p_; }
  void skip(std::size_t n) {
    need(n);
    p_ += n;
  }

 private:
  void need(std::size_t n) const {
    if (n > left())
      throw Error("tessera::dist: a message is " + std::to_string(n - left()) +
                  " B shorter than what its reader expects (mismatched handler arguments or pack/unpack)");
  }
  template <class T>
  std::span<const T> get_container(std::span<const T>*) {
    static_assert(std::is_trivially_copyable_v<T>, "a span argument is of trivially copyable values");
    const auto n = get<std::uint64_t>();
    align(alignof(T));
    if (n > left() / sizeof(T)) need(n * sizeof(T));
    const auto* first = reinterpret_cast<const T*>(p_);
    p_ += n * sizeof(T);
    return {first, static_cast<std::size_t>(n)};
  }
  template <class T>
  std::vector<T> get_container(std::vector<T>*) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      const auto view = get_container(static_cast<std::span<const T>*>(nullptr));
      return std::vector<T>(view.begin(), view.end());
    } else {
      const auto n = get<std::uint64_t>();
      std::vector<T> v;
      for (std::uint64_t i = 0; i < n; ++i) v.push_back(get<T>());
      return v;
    }
  }
  std::string get_container(std::string*) {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

  const std::byte* base_;
  const std::byte* p_;
  const std::byte* end_;
};

}  // namespace tessera::dist
