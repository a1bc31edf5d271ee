#pragma once
// Type-erased callable with a small inline buffer: a node's work without a heap allocation
// for the common case of a lambda capturing a few pointers.

#include <cstddef>
#include <functional>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tessera {
class Node;
class AsyncDone;
}  // namespace tessera

namespace tessera::detail {

class Work {
public:
  static constexpr std::size_t inline_size = 48;

  Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() { reset(); }

  bool empty() const noexcept { return invoke_ == nullptr; }
  bool is_async() const noexcept { return async_; }

  /// Runs the work. A synchronous callable takes no arguments; an asynchronous one takes the
  /// AsyncDone token that its completion is reported through.
  void invoke(Node& node) { invoke_(object_, node); }

  template <class F>
  void assign_sync(F&& f) {
    emplace<std::decay_t<F>>(std::forward<F>(f));
    invoke_ = [](void* obj, Node&) { (*static_cast<std::decay_t<F>*>(obj))(); };
    async_ = false;
  }

  template <class F>
  void assign_async(F&& f);  // defined in node.hpp, where AsyncDone is complete

  void reset() noexcept {
    if (destroy_) destroy_(object_, object_ == static_cast<void*>(storage_));
    invoke_ = nullptr;
    destroy_ = nullptr;
    object_ = nullptr;
  }

private:
  template <class Stored, class F>
  void emplace(F&& f) {
    reset();
    if constexpr (sizeof(Stored) <= inline_size && alignof(Stored) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Stored>) {
      object_ = ::new (static_cast<void*>(storage_)) Stored(std::forward<F>(f));
    } else {
      object_ = new Stored(std::forward<F>(f));
    }
    destroy_ = [](void* obj, bool inline_stored) noexcept {
      if (inline_stored)
        static_cast<Stored*>(obj)->~Stored();
      else
        delete static_cast<Stored*>(obj);
    };
  }

  alignas(std::max_align_t) unsigned char storage_[inline_size];
  void* object_ = nullptr;
  void (*invoke_)(void*, Node&) = nullptr;
  void (*destroy_)(void*, bool) noexcept = nullptr;
  bool async_ = false;
};

/// Binds arguments by value, as std::bind would, without std::bind's placeholders.
template <class F, class... Args>
auto bind_arguments(F&& f, Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::forward<F>(f);
  } else {
    return [fn = std::forward<F>(f), bound = std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)](
               auto&&... front) mutable { return std::apply([&](auto&... a) { return std::invoke(fn, front..., a...); }, bound); };
  }
}

}  // namespace tessera::detail
