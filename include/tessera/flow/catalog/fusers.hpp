#pragma once
// The catalog's fusers (Alea §3.4). connect() records a pair of operations when a `fuse`
// overload exists for their types; the first run of the flow calls it where the producer's
// result goes only to that consumer, and rewires the returned operation in their place. A fuser
// may return nullptr to decline. Users add fusers for their own operations the same way: an
// overload of `fuse(Producer&, Consumer&, const FuseSite&)` in their operations' namespace.
//
//   Map ∘ Map                -> Map of the composed function
//   Transpose -> MatrixProduct -> MatrixProduct reading that operand transposed
//   MatrixProduct -> Map     -> MatrixProduct with the map as its epilogue
//   Map -> Reduce            -> MapReduce (one pass, no array between)

#include <memory>
#include <type_traits>

#include "tessera/flow/catalog/elementwise.hpp"
#include "tessera/flow/catalog/linear_algebra.hpp"
#include "tessera/flow/catalog/rearrange.hpp"
#include "tessera/flow/catalog/reduction.hpp"

namespace tessera::flow {

template <typename A, std::size_t D, typename F, typename G, typename V>
std::unique_ptr<Operation> fuse(Map<A, D, F, V>& first, Map<typename Map<A, D, F, V>::result_type, D, G, V>& second,
                                const FuseSite&) {
  return std::make_unique<Map<A, D, Compose<F, G>, V>>(first.name() + "+" + second.name(),
                                                       Compose<F, G>{first.function(), second.function()});
}

template <typename T, typename V>
std::unique_ptr<Operation> fuse(Transpose<T, V>& t, MatrixProduct<T, detail::Identity, V>& p, const FuseSite& site) {
  ProductOptions o = p.options();
  if (o.right_first) return nullptr;
  if (site.consumer_input == 0) {
    o.transpose_left = !o.transpose_left;
  } else {
    o.transpose_right = !o.transpose_right;
    o.right_first = true;  // the fused operation's first input is the transposed right operand
  }
  return std::make_unique<MatrixProduct<T, detail::Identity, V>>(t.name() + "+" + p.name(), o);
}

template <typename T, typename F, typename V>
std::unique_ptr<Operation> fuse(MatrixProduct<T, detail::Identity, V>& p, Map<T, 2, F, V>& m, const FuseSite&) {
  if constexpr (!std::is_same_v<typename Map<T, 2, F, V>::result_type, T>) {
    return nullptr;  // an epilogue keeps the element type
  } else {
    return std::make_unique<MatrixProduct<T, F, V>>(p.name() + "+" + m.name(), p.options(), m.function());
  }
}

template <typename T, std::size_t D, typename F, typename Op, typename V>
std::unique_ptr<Operation> fuse(Map<T, D, F, V>& m, Reduce<typename Map<T, D, F, V>::result_type, D, Op, V>& r,
                                const FuseSite&) {
  using R = typename Map<T, D, F, V>::result_type;
  return std::make_unique<MapReduce<T, D, F, R, Op, V>>(m.name() + "+" + r.name(), m.function(), r.identity(), r.op());
}

}  // namespace tessera::flow
