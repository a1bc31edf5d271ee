#pragma once
// Minibatches as flow arrays. Each image row carries a constant 1 after its pixels: it meets the
// last row of w1, the hidden layer's bias, so the hidden layer is one MatrixProduct and its
// activation can be fused into that product as an epilogue (a separate bias add would be a Map2,
// which no catalog fuser joins to a product).

#include "flow-mlp/fashion_mnist.hpp"
#include "flow-mlp/operations.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace flow_mlp {

struct Batch {
  Matrix images;  ///< rows x (pixels + 1): each pixel / 255, then 1
  Labels labels;  ///< rows
  std::size_t size() const noexcept { return labels.size(); }
};

/// 0, 1, ..., n - 1.
std::vector<std::size_t> natural_order(std::size_t n);
/// A permutation of [0, n) that depends on `seed` only (the same on every platform).
std::vector<std::size_t> shuffled_order(std::size_t n, std::uint64_t seed);

/// The examples of `data` in `order`, `batch_size` to a batch (the last one may be smaller), as
/// arrays of `flow`. Throws tessera::Error for a batch size of 0 or an index outside `data`.
std::vector<Batch> make_batches(flow::Flow& flow, const Dataset& data, std::span<const std::size_t> order,
                                std::size_t batch_size);

}  // namespace flow_mlp
