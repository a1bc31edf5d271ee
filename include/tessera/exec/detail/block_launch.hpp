#pragma once
// Turning for_each's arguments into one block's arguments: checking the tensors agree, getting
// each tensor block's memory on the device that runs it (through coherence), and handing it back.

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/site_reduction.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/memory/buffer.hpp"

namespace tessera::detail {

template <typename A>
struct is_in_shared : std::false_type {};
template <typename Tn, Access A>
struct is_in_shared<InShared<Tn, A>> : std::true_type {};
// read_only(t) (a Graph's concurrent padded access makes one too: its blocks are prepared for
// reading, so that copies out of them, halos, may run while the kernel does) and write_only(t).
template <typename A>
struct is_read_only : std::false_type {};
template <typename Tn>
struct is_read_only<ReadOnly<Tn>> : std::true_type {};
template <typename A>
struct is_write_only : std::false_type {};
template <typename Tn>
struct is_write_only<WriteOnly<Tn>> : std::true_type {};

/// tessera::uniform(t): not a tensor argument (its block is not the kernel's), read at one site.
template <typename A>
struct is_uniform : std::false_type {};
template <typename Tn>
struct is_uniform<Uniform<Tn>> : std::true_type {};

template <typename A>
constexpr bool is_tensor_argument() {
  using V = std::remove_cvref_t<A>;
  return TensorLike<V> || is_in_shared<V>::value || is_read_only<V>::value || is_write_only<V>::value;
}

template <typename A>
auto& tensor_of(A& a) {
  using V = std::remove_cvref_t<A>;
  if constexpr (is_in_shared<V>::value || is_read_only<V>::value || is_write_only<V>::value)
    return a.tensor;
  else
    return a;
}

template <typename A>
struct is_read_only_in_shared : std::false_type {};
template <typename Tn>
struct is_read_only_in_shared<InShared<Tn, Access::read>> : std::true_type {};
/// read_only(t) or in_shared(read_only(t)).
template <typename A>
constexpr bool is_read_only_argument() {
  using V = std::remove_cvref_t<A>;
  return is_read_only<V>::value || is_read_only_in_shared<V>::value;
}

/// How the kernel accesses a tensor argument (what its iterators are typed with).
template <typename A>
constexpr Access kernel_access_of() {
  using V = std::remove_cvref_t<A>;
  return is_read_only_argument<V>() ? Access::read : is_write_only<V>::value ? Access::write : Access::read_write;
}
/// How a launch accesses a tensor argument's blocks in the memory layer. A write_only tensor is
/// still read_write there: the kernel writes only the interior, and the padding must stay.
template <typename A>
constexpr Access access_of() {
  return is_read_only_argument<A>() ? Access::read : Access::read_write;
}

/// Where each tensor argument's block lives, as for_each needs to check and reach it.
struct TensorBlockRef {
  const std::string* name;
  Buffer* buffer;
  std::size_t space;
};

/// The tensors among `args` for block b, in argument order.
template <typename... A>
std::vector<TensorBlockRef> tensor_blocks(std::size_t b, A&... args) {
  std::vector<TensorBlockRef> refs;
  auto add = [&](auto& a) {
    if constexpr (is_tensor_argument<decltype(a)>()) {
      auto& t = tensor_of(a);
      refs.push_back(TensorBlockRef{&t.name(), &t.buffer(b), t.space(b)});
    }
  };
  (add(args), ...);
  return refs;
}

/// Throws tessera::Error unless every tensor argument has the first one's blocks (count, boxes
/// and memory spaces); returns the block count.
template <typename... A>
std::size_t check_same_blocks(const char* what, A&... args) {
  const std::string* first_name = nullptr;
  std::size_t blocks = 0;
  std::vector<std::pair<std::string, std::string>> mismatch;
  auto check = [&](auto& a) {
    if constexpr (is_tensor_argument<decltype(a)>()) {
      auto& t = tensor_of(a);
      if (first_name == nullptr) {
        first_name = &t.name();
        blocks = t.num_blocks();
        return;
      }
      if (t.num_blocks() != blocks)
        throw Error(std::string(what) + ": tensor '" + t.name() + "' has " + std::to_string(t.num_blocks()) +
                    " blocks but '" + *first_name + "' has " + std::to_string(blocks) +
                    "; tensors in one kernel need the same sizes and partitions");
    }
  };
  (check(args), ...);
  if (first_name == nullptr)
    throw Error(std::string(what) + " needs at least one tensor argument to iterate over");
  return blocks;
}

template <typename Tn0, typename Tn>
void check_block_matches(const char* what, std::size_t b, const Tn0& first, const Tn& t) {
  if (!(first.geometry(b).interior == t.geometry(b).interior))
    throw Error(std::string(what) + ": block " + std::to_string(b) + " of tensor '" + t.name() +
                "' covers different cells than the same block of '" + first.name() +
                "'; tensors in one kernel need the same sizes and partitions");
  if (first.space(b) != t.space(b))
    throw Error(std::string(what) + ": block " + std::to_string(b) + " of tensor '" + t.name() +
                "' lives in memory space " + std::to_string(t.space(b)) + " but the same block of '" +
                first.name() + "' lives in space " + std::to_string(first.space(b)) +
                "; place both tensors' partitions on the same devices");
}

/// The block argument for a tensor argument whose memory for this block is `data`.
template <typename A>
auto block_arg(A& a, std::size_t b, std::byte* data) {
  using V = std::remove_cvref_t<A>;
  if constexpr (is_in_shared<V>::value) {
    using Tn = std::remove_cvref_t<decltype(a.tensor)>;
    return SharedBlockArg<typename Tn::value_type, Tn::dims, typename Tn::layout_type, kernel_access_of<A>()>{
        data, a.tensor.geometry(b)};
  } else if constexpr (is_read_only<V>::value || is_write_only<V>::value) {
    using Tn = std::remove_cvref_t<decltype(a.tensor)>;
    return TensorBlockArg<typename Tn::value_type, Tn::dims, typename Tn::layout_type, kernel_access_of<A>()>{
        data, a.tensor.geometry(b)};
  } else if constexpr (TensorLike<V>) {
    return TensorBlockArg<typename V::value_type, V::dims, typename V::layout_type>{data, a.geometry(b)};
  } else if constexpr (is_reduction_slots<V>::value) {
    return ReduceBlockArg<std::remove_pointer_t<decltype(a.slots)>, decltype(a.reducer)>{a.slots + b, a.reducer};
  } else {
    return ValueArg<std::decay_t<A>>{a};
  }
}

}  // namespace tessera::detail
