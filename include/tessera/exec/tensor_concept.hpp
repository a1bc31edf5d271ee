#pragma once
// TensorLike: what kernel execution needs from a tensor, so exec does not depend on Tensor's
// implementation (and tests can run kernels over hand-made blocks).

#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>

#include "tessera/memory/access.hpp"
#include "tessera/tensor/block_geometry.hpp"

namespace tessera {

class Buffer;
class MemoryManager;

template <typename Tn>
concept TensorLike = requires(const Tn& t, std::size_t b) {
  typename Tn::value_type;
  typename Tn::layout_type;
  { Tn::dims } -> std::convertible_to<std::size_t>;
  { t.size() } -> std::convertible_to<Extent<Tn::dims>>;
  { t.num_blocks() } -> std::convertible_to<std::size_t>;
  { t.geometry(b) } -> std::convertible_to<const BlockGeometry<Tn::dims>&>;
  { t.space(b) } -> std::convertible_to<std::size_t>;
  { t.buffer(b) } -> std::convertible_to<Buffer&>;
  { t.memory() } -> std::convertible_to<MemoryManager&>;
  { t.name() } -> std::convertible_to<const std::string&>;
};

/// Marks a tensor argument the kernel only reads (OPS's OPS_READ): its iterators give views
/// whose members are const, so a write does not compile; its blocks are prepared for reading,
/// so copies of it elsewhere stay valid and other readers may run alongside; and on the CPU its
/// Tiled tiles are staged without being compared and copied back.
///
///   tessera::for_each(ex, kernel, tessera::read_only(u), tessera::write_only(out));
template <TensorLike Tn>
struct ReadOnly {
  Tn& tensor;
};
template <TensorLike Tn>
ReadOnly<Tn> read_only(Tn& t) {
  return ReadOnly<Tn>{t};
}

/// Marks a tensor argument the kernel writes at its own site and does not otherwise read (OPS's
/// OPS_WRITE). On the CPU its Tiled tiles are then not staged: the kernel writes tensor memory
/// directly. Data movement stays read-write, since a kernel writes only the interior and the
/// padding must keep its values. A kernel that reads it anyway still reads the right values,
/// only more slowly in Tiled layouts.
template <TensorLike Tn>
struct WriteOnly {
  Tn& tensor;
};
template <TensorLike Tn>
WriteOnly<Tn> write_only(Tn& t) {
  return WriteOnly<Tn>{t};
}

/// Marks a tensor of one site whose value every site of the kernel reads: a time step, a
/// coefficient, a total that an earlier kernel computed on the device (reduce_into a one-site
/// tensor). The kernel gets the number itself, read where and when the kernel runs (on a GPU
/// from device memory, in stream order), so a value one kernel computes reaches the next one
/// without a trip through the host, as a Kokkos::View of rank 0 does. The tensor may live in
/// any memory space: the memory layer brings it to each block's device. Kernels only read it;
/// numbers only (an arithmetic value type).
///
///   tessera::for_each(ex, [] TESSERA_HOST_DEVICE (auto u, double dt) { *u -= dt * *u; },
///                     u, tessera::uniform(dt));
template <TensorLike Tn>
struct Uniform {
  static_assert(std::is_arithmetic_v<typename Tn::value_type>,
                "tessera::uniform passes a number to every site: the tensor's value type must be arithmetic");
  Tn& tensor;
};
template <TensorLike Tn>
Uniform<Tn> uniform(Tn& t) {
  return Uniform<Tn>{t};
}

/// Marks a tensor argument to be staged in shared memory (CUDA) or a per-tile scratch buffer
/// (CPU) with its padding before the kernel runs; the kernel then gets a BlockIterator over the
/// staged tile, and the tile's interior is written back after it. Ripple's `in_shared`.
/// `in_shared(read_only(t))` stages a tensor the kernel only reads: its BlockIterators give
/// views with const members, and nothing is written back.
///
///   tessera::for_each(ex, kernel, tessera::in_shared(u), out);
///   tessera::for_each(ex, kernel, tessera::in_shared(tessera::read_only(u)), out);
template <TensorLike Tn, Access A = Access::read_write>
struct InShared {
  static_assert(A == Access::read_write || A == Access::read, "in_shared stages tensors read-write or read-only");
  Tn& tensor;
};
template <TensorLike Tn>
InShared<Tn> in_shared(Tn& t) {
  return InShared<Tn>{t};
}
template <TensorLike Tn>
InShared<Tn, Access::read> in_shared(ReadOnly<Tn> t) {
  return InShared<Tn, Access::read>{t.tensor};
}

}  // namespace tessera
