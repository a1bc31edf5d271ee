// The catalog's errors: each names the operation and the values that were wrong.

#include <tessera/core/error.hpp>
#include <tessera/flow/catalog.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tessera::flow::detail {

void throw_shapes_differ(const std::string& op, std::span<const std::size_t> a, std::span<const std::size_t> b) {
  throw Error(
      fmt::format("flow: operation '{}' got inputs of different shapes, ({}) and ({}); element-wise "
                  "operations need one shape",
                  op, fmt::join(a, ", "), fmt::join(b, ", ")));
}

void throw_product_shapes(const std::string& op, std::size_t m, std::size_t k, std::size_t k2, std::size_t n) {
  throw Error(
      fmt::format("flow: operation '{}' multiplies a {}x{} operand by a {}x{} one: the inner sizes ({} and {}) "
                  "must agree",
                  op, m, k, k2, n, k, k2));
}

void throw_not_converged(const std::string& op, std::size_t iterations, double distance) {
  throw Error(
      fmt::format("flow: '{}' did not converge within {} iterations (the last distance was {:g}); raise "
                  "the threshold or max_iterations, or check that the cycle contracts",
                  op, iterations, distance));
}

void throw_empty_statistic(const std::string& op, std::size_t n, std::size_t needed) {
  throw Error(fmt::format("flow: operation '{}' needs at least {} value(s), got {}", op, needed, n));
}

}  // namespace tessera::flow::detail
