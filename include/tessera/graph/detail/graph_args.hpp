#pragma once
// Internal: how a Graph keeps a split's arguments until its nodes run, and what each becomes
// when they do. Tensors are kept by pointer (the graph refers to the caller's tensors), values by
// copy, and std::reference_wrapper arguments are read at run time.

#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "tessera/exec/detail/block_launch.hpp"
#include "tessera/exec/reduce_into.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/graph/detail/partial_slots.hpp"
#include "tessera/graph/padded_access.hpp"

namespace tessera {
class Executor;
}

namespace tessera::detail {

struct GraphRunContext;
/// The executor running the graph now (set by Graph::run*).
Executor* run_executor(const GraphRunContext& context) noexcept;

template <typename Tn>
struct StoredTensor {
  Tn* tensor;
};
// A padded argument as kept: how the kernel sees it (read-only for concurrent access, staged for
// the in_shared variants: the concurrent one read-only too, the exclusive one written back).
template <typename Tn, bool Shared, PaddedAccess Mode>
struct StoredPadded {
  static constexpr PaddedAccess mode = Mode;
  static constexpr Access access = Mode == PaddedAccess::concurrent ? Access::read : Access::read_write;
  std::conditional_t<Shared, InShared<Tn, access>, std::conditional_t<Mode == PaddedAccess::concurrent, ReadOnly<Tn>, Tn*>>
      view_;
  StencilShape stencil;  // which of its padding the kernel reads
  decltype(auto) view() const {
    if constexpr (!Shared && Mode == PaddedAccess::exclusive)
      return (*view_);
    else
      return (view_);
  }
  Tn& tensor() const {
    if constexpr (!Shared && Mode == PaddedAccess::exclusive)
      return *view_;
    else
      return view_.tensor;
  }
};

template <typename A>
struct is_padded_access : std::false_type {};
template <typename Tn, bool S, PaddedAccess M>
struct is_padded_access<PaddedAccessArg<Tn, S, M>> : std::true_type {};
template <typename A>
struct is_stored_padded : std::false_type {};
template <typename Tn, bool S, PaddedAccess M>
struct is_stored_padded<StoredPadded<Tn, S, M>> : std::true_type {};
template <typename A>
struct is_reference_wrapper : std::false_type {};
template <typename T>
struct is_reference_wrapper<std::reference_wrapper<T>> : std::true_type {};

template <typename A>
constexpr bool is_graph_tensor_argument() {
  return is_tensor_argument<A>() || is_padded_access<std::remove_cvref_t<A>>::value;
}

template <typename Tn, bool S, PaddedAccess M>
auto store_padded(const PaddedAccessArg<Tn, S, M>& a) {
  using Stored = StoredPadded<Tn, S, M>;
  if constexpr (S)
    return Stored{InShared<Tn, Stored::access>{a.tensor}, a.stencil};
  else if constexpr (M == PaddedAccess::concurrent)
    return Stored{ReadOnly<Tn>{a.tensor}, a.stencil};
  else
    return Stored{&a.tensor, a.stencil};
}

/// A reduce_into argument as kept: the result, and one partial per block (sized once the
/// split's block count is known), shared by the split's nodes and its final node.
template <typename R, typename Reducer>
struct StoredReduction {
  ReductionResult<R>* result;
  Reducer reducer;
  std::shared_ptr<PartialSlots<R>> partials;
  ReductionSlots<R, Reducer> slots;  // into *partials, once sized (size_partials)
  /// One slot per block, pinned by `pinned_from` (a device that holds a block) where it can.
  void size_partials(std::size_t blocks, Device* pinned_from, bool /*one_process*/) {
    partials = std::make_shared<PartialSlots<R>>(blocks, Reducer::template identity<R>(), pinned_from);
    slots.slots = partials->data();
  }
};
/// A reduce_into(tensor) argument as kept. A split of one block in one process (one device, no
/// ranks) folds straight into the tensor's site where the block runs; otherwise as above, and
/// the final node writes the total into the tensor.
template <typename Tn, typename Reducer>
struct StoredTensorReduction {
  using value_type = typename Tn::value_type;
  Tn* tensor;
  Reducer reducer;
  std::shared_ptr<PartialSlots<value_type>> partials;  // null: the block writes the tensor
  TensorReductionSlots<Tn, Reducer> slots;
  void size_partials(std::size_t blocks, Device* pinned_from, bool one_process) {
    if (blocks == 1 && one_process) return;
    partials =
        std::make_shared<PartialSlots<value_type>>(blocks, Reducer::template identity<value_type>(), pinned_from);
    slots.slots = partials->data();
  }
};
template <typename A>
struct is_stored_tensor_reduction : std::false_type {};
template <typename Tn, typename Reducer>
struct is_stored_tensor_reduction<StoredTensorReduction<Tn, Reducer>> : std::true_type {};

template <typename A>
struct is_stored_reduction : std::false_type {};
template <typename R, typename Reducer>
struct is_stored_reduction<StoredReduction<R, Reducer>> : std::true_type {};
template <typename Tn, typename Reducer>
struct is_stored_reduction<StoredTensorReduction<Tn, Reducer>> : std::true_type {};

template <typename A>
auto store_graph_arg(A&& a) {
  using V = std::remove_cvref_t<A>;
  if constexpr (TensorLike<V>) {
    return StoredTensor<V>{&a};
  } else if constexpr (is_padded_access<V>::value) {
    return store_padded(a);
  } else if constexpr (is_reduce_into_tensor<V>::value) {
    using Tn = std::remove_pointer_t<decltype(a.tensor)>;
    using Reducer = decltype(a.reducer);
    check_reduction_tensor("Graph::split", *a.tensor);
    return StoredTensorReduction<Tn, Reducer>{a.tensor, a.reducer, nullptr,
                                              TensorReductionSlots<Tn, Reducer>{a.tensor, nullptr, a.reducer}};
  } else if constexpr (is_reduce_into<V>::value) {
    using R = typename std::remove_cvref_t<decltype(*a.result)>::value_type;
    using Reducer = decltype(a.reducer);
    return StoredReduction<R, Reducer>{a.result, a.reducer, nullptr, ReductionSlots<R, Reducer>{nullptr, a.reducer}};
  } else {
    return V(std::forward<A>(a));
  }
}

/// A stored argument as for_each sees it, for checking (reference wrappers stay wrapped).
template <typename S>
decltype(auto) launch_view(S& s) {
  if constexpr (requires { s.tensor; } && !is_stored_padded<S>::value && !is_in_shared<S>::value &&
                !is_read_only<S>::value && !is_write_only<S>::value && !is_uniform<S>::value &&
                !is_stored_reduction<S>::value)
    return (*s.tensor);
  else if constexpr (is_stored_padded<S>::value)
    return s.view();
  else if constexpr (is_stored_reduction<S>::value)
    return (s.slots);
  else
    return (s);
}

/// A run of a split that reduces makes its result incomplete until the split's final node.
template <typename S>
void reset_result(S& s) {
  if constexpr (is_stored_reduction<S>::value && !is_stored_tensor_reduction<S>::value) s.result->reset();
}

/// A stored argument as the kernel launch takes it: reference wrappers read now.
template <typename S>
decltype(auto) launch_arg(S& s) {
  if constexpr (is_reference_wrapper<S>::value)
    return std::remove_cv_t<typename S::type>(s.get());
  else
    return launch_view(s);
}

/// Identifies how a tensor is cut into blocks: block nodes of two operations match block by
/// block only when their tensors are cut the same way.
template <typename Tn>
std::size_t partitioning_key(const Tn& t) {
  std::size_t h = t.num_blocks() * 0x9E3779B97F4A7C15ull;
  auto mix = [&h](std::int64_t v) { h ^= static_cast<std::size_t>(v) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); };
  for (std::size_t b = 0; b < t.num_blocks(); ++b)
    for (std::size_t d = 0; d < Tn::dims; ++d) {
      mix(t.geometry(b).interior.lo.coords[d]);
      mix(t.geometry(b).interior.hi.coords[d]);
    }
  return h;
}

}  // namespace tessera::detail
