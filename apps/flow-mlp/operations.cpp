#include "flow-mlp/operations.hpp"

#include <tessera/core/error.hpp>

#include <array>
#include <cstddef>

namespace flow_mlp {
namespace {

void check_output_layer(const flow::Operation& op, const Matrix& logits, const Vector& bias, const Labels& labels) {
  if (bias.size() != logits.extent(1) || labels.size() != logits.extent(0))
    throw tessera::Error(op.name() + ": logits of " + std::to_string(logits.extent(0)) + " x " +
                         std::to_string(logits.extent(1)) + " need a bias of " + std::to_string(logits.extent(1)) +
                         " and " + std::to_string(logits.extent(0)) + " labels, got " + std::to_string(bias.size()) +
                         " and " + std::to_string(labels.size()));
}

}  // namespace

void SoftmaxCrossEntropy::fire(flow::Context& c) {
  const Matrix& z = c.get(logits);
  const Vector& b = c.get(bias);
  const Labels& y = c.get(labels);
  check_output_layer(*this, z, b, y);
  const std::size_t rows = z.extent(0), classes = z.extent(1);
  auto [g, pg] = c.allocate<float>(z.shape());
  auto [ll, pll] = c.allocate<float>(std::array<std::size_t, 1>{rows});
  const float* pz = c.read(z);
  const float* pb = c.read(b);
  const std::int32_t* py = c.read(y);
  const float scale = 1.0f / static_cast<float>(rows);
  auto row = [pz, pb, py, pg, pll, classes, scale] TESSERA_HOST_DEVICE(std::size_t r) {
    const float* zr = pz + r * classes;
    float top = zr[0] + pb[0];
    for (std::size_t j = 1; j < classes; ++j) top = fmaxf(top, zr[j] + pb[j]);
    float total = 0.0f;
    for (std::size_t j = 0; j < classes; ++j) total += expf(zr[j] + pb[j] - top);
    const float inverse = 1.0f / total;
    const std::int32_t label = py[r];
    const bool known = label >= 0 && static_cast<std::size_t>(label) < classes;
    for (std::size_t j = 0; j < classes; ++j) {
      const float p = expf(zr[j] + pb[j] - top) * inverse;
      const float target = known && static_cast<std::size_t>(label) == j ? 1.0f : 0.0f;
      pg[r * classes + j] = (p - target) * scale;
    }
    pll[r] = known ? zr[label] + pb[label] - top - logf(total) : -HUGE_VALF;
  };
  c.launch("softmax cross-entropy", rows, row);
  c.emit(gradient, std::move(g));
  c.emit(log_likelihood, std::move(ll));
}

void ColumnSums::fire(flow::Context& c) {
  const Matrix& x = c.get(input);
  const std::size_t rows = x.extent(0), cols = x.extent(1);
  auto [s, ps] = c.allocate<float>(std::array<std::size_t, 1>{cols});
  const float* px = c.read(x);
  auto column = [px, ps, rows, cols] TESSERA_HOST_DEVICE(std::size_t j) {
    float acc = 0.0f;
    for (std::size_t r = 0; r < rows; ++r) acc += px[r * cols + j];
    ps[j] = acc;
  };
  c.launch("column sums", cols, column);
  c.emit(sums, std::move(s));
}

void ScorePredictions::fire(flow::Context& c) {
  const Matrix& z = c.get(logits);
  const Vector& b = c.get(bias);
  const Labels& y = c.get(labels);
  check_output_layer(*this, z, b, y);
  const std::size_t rows = z.extent(0), classes = z.extent(1);
  auto [h, ph] = c.allocate<std::int32_t>(std::array<std::size_t, 1>{rows});
  const float* pz = c.read(z);
  const float* pb = c.read(b);
  const std::int32_t* py = c.read(y);
  auto row = [pz, pb, py, ph, classes] TESSERA_HOST_DEVICE(std::size_t r) {
    const float* zr = pz + r * classes;
    std::size_t best = 0;
    for (std::size_t j = 1; j < classes; ++j)
      if (zr[j] + pb[j] > zr[best] + pb[best]) best = j;
    ph[r] = py[r] >= 0 && static_cast<std::size_t>(py[r]) == best ? 1 : 0;
  };
  c.launch("score predictions", rows, row);
  c.emit(hits, std::move(h));
}

}  // namespace flow_mlp
