#pragma once
// Reduction<T>: a value a loop reduces into (OPS's ops_reduction), with inc, min or max.
// Deterministic: every row of a loop's range reduces its sites in order, and the rows combine in
// order, so the result has the same bits whatever the number of workers or devices.

#include <tessera/loops/block.hpp>

#include <limits>
#include <memory>
#include <string>

namespace tessera::loops {

enum class ReduceOp { inc, min, max };

namespace detail {

template <typename T>
constexpr T identity(ReduceOp op) {
  if (op == ReduceOp::inc) return T{};
  if constexpr (std::numeric_limits<T>::has_infinity)
    return op == ReduceOp::min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else
    return op == ReduceOp::min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

/// Row partials combine in order. min and max propagate NaN (IEEE 754's minimum and maximum,
/// not std::fmin), so a NaN anywhere in a range reaches the result instead of being dropped.
template <typename T>
constexpr T combine(ReduceOp op, const T& a, const T& b) {
  if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
    if (op != ReduceOp::inc) {
      if (a != a) return a;
      if (b != b) return b;
    }
  }
  switch (op) {
    case ReduceOp::inc:
      return a + b;
    case ReduceOp::min:
      return b < a ? b : a;
    default:
      return a < b ? b : a;
  }
}

template <typename T>
struct ReductionState {
  ReductionState(ReduceOp o, std::string n) : op(o), name(std::move(n)), value(identity<T>(o)) {}
  ReduceOp op;
  std::string name;
  T value;
};

}  // namespace detail

///   tessera::loops::Reduction<double> err(context, tessera::loops::ReduceOp::inc, "err");
///   par_loop(kernel, "error", block, range, read(u, zero), reduce(err));
///   double e = err.get();  // runs the chain
template <typename T>
class Reduction {
 public:
  Reduction(Context& context, ReduceOp op, std::string name = "reduction")
      : context_(&context), state_(std::make_shared<detail::ReductionState<T>>(op, std::move(name))) {}

  /// Runs the recorded loops and returns what the last loop that reduced into this handle
  /// produced (each such loop starts from the identity: 0, +inf or -inf); the identity if none did.
  T get() {
    context_->execute();
    return state_->value;
  }
  ReduceOp op() const noexcept { return state_->op; }
  const std::string& name() const noexcept { return state_->name; }
  const std::shared_ptr<detail::ReductionState<T>>& state() const noexcept { return state_; }
  Context& context() const noexcept { return *context_; }

 private:
  Context* context_;
  std::shared_ptr<detail::ReductionState<T>> state_;
};

}  // namespace tessera::loops
