#pragma once
// TensorLike: what kernel execution needs from a tensor, so exec does not depend on Tensor's
// implementation (and tests can run kernels over hand-made blocks).

#include <concepts>
#include <cstddef>
#include <string>

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

/// Marks a tensor argument to be staged in shared memory (CUDA) or a per-tile scratch buffer
/// (CPU) with its padding before the kernel runs; the kernel then gets a BlockIterator over the
/// staged tile, and the tile's interior is written back after it. Ripple's `in_shared`.
///
///   tessera::for_each(ex, kernel, tessera::in_shared(u), out);
template <TensorLike Tn>
struct InShared {
  Tn& tensor;
};
template <TensorLike Tn>
InShared<Tn> in_shared(Tn& t) {
  return InShared<Tn>{t};
}

}  // namespace tessera
