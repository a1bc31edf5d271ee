#pragma once
// Access modifiers for a Graph's tensor operations (Ripple §5.4). A tensor passed plainly is
// read and written by its own block only. A kernel that reads its neighbours' data through the
// padding says so, and how it writes, and the graph inserts the halo-transfer nodes and the
// edges that keep them race free:
//
//   graph.then_split(difference, tessera::concurrent_padded_access(x), y);  // reads x's halo, writes y
//   graph.then_split(smooth, tessera::exclusive_padded_access(x));          // reads x's halo, writes x
//
// The `_in_shared` variants also stage each launch tile with its padding (see in_shared).

#include <cstdint>
#include <type_traits>

#include "tessera/exec/tensor_concept.hpp"

namespace tessera {

enum class PaddedAccess : std::uint8_t {
  /// The kernel writes nothing another block reads as padding: transfers out of a block may
  /// overlap the kernel on it.
  concurrent,
  /// The kernel writes data its neighbours read as padding: it waits until the transfers out of
  /// its block have read the old values.
  exclusive,
};

/// A tensor argument whose padding the kernel reads; `Shared`: staged as in_shared too.
template <TensorLike Tn, bool Shared>
struct PaddedAccessArg {
  Tn& tensor;
  PaddedAccess mode;
};

template <TensorLike Tn>
PaddedAccessArg<Tn, false> concurrent_padded_access(Tn& t) {
  return {t, PaddedAccess::concurrent};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, false> exclusive_padded_access(Tn& t) {
  return {t, PaddedAccess::exclusive};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, true> concurrent_padded_access_in_shared(Tn& t) {
  return {t, PaddedAccess::concurrent};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, true> exclusive_padded_access_in_shared(Tn& t) {
  return {t, PaddedAccess::exclusive};
}

}  // namespace tessera
