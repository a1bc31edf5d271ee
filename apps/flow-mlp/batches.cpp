#include "flow-mlp/batches.hpp"

#include <tessera/core/error.hpp>

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

namespace flow_mlp {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): a fixed generator, where std::shuffle's result depends
// on the standard library.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<std::size_t> natural_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

std::vector<std::size_t> shuffled_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order = natural_order(n);
  std::uint64_t state = seed;
  // Fisher-Yates; the modulo's bias is below n / 2^64.
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[splitmix64(state) % i]);
  return order;
}

std::vector<Batch> make_batches(flow::Flow& flow, const Dataset& data, std::span<const std::size_t> order,
                                std::size_t batch_size) {
  if (batch_size == 0) throw tessera::Error("flow-mlp: the batch size must be at least 1");
  const std::size_t pixels = data.pixels_per_image();
  const std::size_t width = pixels + 1;
  std::vector<Batch> batches;
  batches.reserve((order.size() + batch_size - 1) / batch_size);
  std::vector<float> images;
  std::vector<std::int32_t> labels;
  for (std::size_t first = 0; first < order.size(); first += batch_size) {
    const std::size_t rows = std::min(batch_size, order.size() - first);
    images.resize(rows * width);
    labels.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t example = order[first + r];
      if (example >= data.size())
        throw tessera::Error("flow-mlp: example " + std::to_string(example) + " is outside the data set of " +
                             std::to_string(data.size()));
      const std::uint8_t* in = data.pixels.data() + example * pixels;
      float* out = images.data() + r * width;
      for (std::size_t p = 0; p < pixels; ++p) out[p] = static_cast<float>(in[p]) * (1.0f / 255.0f);
      out[pixels] = 1.0f;
      labels[r] = data.labels[example];
    }
    batches.push_back(Batch{Matrix(flow, std::array<std::size_t, 2>{rows, width}, std::span<const float>(images)),
                            Labels(flow, labels)});
  }
  return batches;
}

}  // namespace flow_mlp
