#pragma once
// Access modifiers for a Graph's tensor operations (Ripple §5.4). A tensor passed plainly is
// read and written by its own block only. A kernel that reads its neighbours' data through the
// padding says so, and how it writes, and the graph inserts the halo-transfer nodes and the
// edges that keep them race free:
//
//   graph.then_split(difference, tessera::concurrent_padded_access(x), y);  // reads x's halo, writes y
//   graph.then_split(smooth, tessera::exclusive_padded_access(x));          // reads x's halo, writes x
//
// The `_in_shared` variants also stage each launch tile with its padding (see in_shared); the
// concurrent one stages read-only, as in_shared(read_only(t)) does. A kernel that reads its
// neighbours only along the axes (a 5- or 7-point stencil, a dimension-split sweep) says so with
// a StencilShape, and only those faces are exchanged (6 of a 3-D block's 26 neighbours):
//
//   graph.then_split(jacobi, tessera::concurrent_padded_access(u, tessera::StencilShape::star()), v);

#include <cstdint>
#include <type_traits>

#include "tessera/exec/tensor_concept.hpp"
#include "tessera/tensor/halo.hpp"

namespace tessera {

enum class PaddedAccess : std::uint8_t {
  /// The kernel only reads the tensor: transfers out of a block may overlap the kernel on it.
  concurrent,
  /// The kernel writes data its neighbours read as padding: it waits until the transfers out of
  /// its block have read the old values.
  exclusive,
};

/// A tensor argument whose padding the kernel reads (the part `stencil` names); `Shared`: staged
/// as in_shared too. With concurrent access the kernel only reads the tensor.
template <TensorLike Tn, bool Shared, PaddedAccess Mode>
struct PaddedAccessArg {
  Tn& tensor;
  StencilShape stencil = StencilShape::box();
};

template <TensorLike Tn>
PaddedAccessArg<Tn, false, PaddedAccess::concurrent> concurrent_padded_access(
    Tn& t, StencilShape stencil = StencilShape::box()) {
  return {t, stencil};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, false, PaddedAccess::exclusive> exclusive_padded_access(
    Tn& t, StencilShape stencil = StencilShape::box()) {
  return {t, stencil};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, true, PaddedAccess::concurrent> concurrent_padded_access_in_shared(
    Tn& t, StencilShape stencil = StencilShape::box()) {
  return {t, stencil};
}
template <TensorLike Tn>
PaddedAccessArg<Tn, true, PaddedAccess::exclusive> exclusive_padded_access_in_shared(
    Tn& t, StencilShape stencil = StencilShape::box()) {
  return {t, stencil};
}

}  // namespace tessera
