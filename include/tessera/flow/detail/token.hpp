#pragma once
// Internal: a value in a dataflow stream, type-erased, with the input set it belongs to and a
// way to find the Buffers inside it (an Array, Arrays in a tuple or pair), which placement
// weighs and lazy copies move.

#include <any>
#include <cstdint>
#include <tuple>
#include <utility>

#include "tessera/flow/array.hpp"

namespace tessera::flow::detail {

using BufferVisit = void (*)(const Buffer& buffer, void* context);
using VisitFn = void (*)(const std::any& value, BufferVisit visit, void* context);

struct Token {
  std::any value;
  std::uint64_t set = 0;
  VisitFn visit = nullptr;  // null: no buffers inside
};

template <typename T>
struct HasBuffers : std::false_type {};
template <typename T, std::size_t D>
struct HasBuffers<Array<T, D>> : std::true_type {};
template <typename... Ts>
struct HasBuffers<std::tuple<Ts...>> : std::bool_constant<(HasBuffers<Ts>::value || ...)> {};
template <typename A, typename B>
struct HasBuffers<std::pair<A, B>> : std::bool_constant<HasBuffers<A>::value || HasBuffers<B>::value> {};

template <typename T>
void visit_value(const T& v, BufferVisit f, void* ctx) {
  if constexpr (is_array_v<T>) {
    if (const Buffer* b = v.buffer()) f(*b, ctx);
  } else if constexpr (HasBuffers<T>::value) {
    std::apply([&](const auto&... parts) { (visit_value(parts, f, ctx), ...); }, v);
  }
}

template <typename T>
Token make_token(T value) {
  Token t{std::any(std::move(value)), 0, nullptr};
  if constexpr (HasBuffers<T>::value)
    t.visit = [](const std::any& a, BufferVisit f, void* ctx) { visit_value(*std::any_cast<T>(&a), f, ctx); };
  return t;
}

}  // namespace tessera::flow::detail
