#pragma once
// Writer and Reader: the byte form of handler arguments and of migrating objects. Trivially
// copyable values, std::vector and std::string of them are built in; a type that is not
// trivially copyable gives itself `void pack(Writer&) const` and `static T unpack(Reader&)`.

#include <tessera/core/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::dist {

class Writer;
class Reader;

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

  template <class T>
  void put(const T& value) {
    if constexpr (SelfPacking<T>) {
      value.pack(*this);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      bytes(&value, sizeof(T));
    } else {
      put_container(value);
    }
  }

 private:
  template <class T>
  void put_container(const std::vector<T>& v) {
    put<std::uint64_t>(v.size());
    if constexpr (std::is_trivially_copyable_v<T>) {
      bytes(v.data(), v.size() * sizeof(T));
    } else {
      for (const auto& x : v) put(x);
    }
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
  Reader(const std::byte* data, std::size_t size) : p_(data), end_(data + size) {}

  void bytes(void* out, std::size_t n) {
    need(n);
    std::memcpy(out, p_, n);
    p_ += n;
  }

  template <class T>
  T get() {
    if constexpr (SelfPacking<T>) {
      return T::unpack(*this);
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
  std::vector<T> get_container(std::vector<T>*) {
    const auto n = get<std::uint64_t>();
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (n > left() / (sizeof(T) ? sizeof(T) : 1)) need(n * sizeof(T));
      std::vector<T> v(n);
      bytes(v.data(), n * sizeof(T));
      return v;
    } else {
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

  const std::byte* p_;
  const std::byte* end_;
};

}  // namespace tessera::dist
