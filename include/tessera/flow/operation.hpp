#pragma once
// flow::Operation: the base of every dataflow operation, catalog and custom alike (Alea §4.1).
// An operation declares its ports as members, says when it is ready to fire (by default: a
// value waits on every input), whether firings may overlap, and where it may run; fire() gets a
// Context through which it reads its inputs, launches kernels and emits results.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/flow/port.hpp"

namespace tessera::flow {

class Context;
class Flow;

namespace detail {
struct OperationState;
class Engine;
}  // namespace detail

/// Where an operation's firings may run.
enum class Runs {
  anywhere,  ///< host or any accelerator, as the flow's placement policy decides
  host,      ///< on the executor's CPU workers only (control flow, host libraries)
};

/// Derive from Operation, declare ports as members, implement fire().
///
///   struct Scale : flow::Operation {
///     flow::InputPort<flow::Vector<double>> input{*this, "input"};
///     flow::OutputPort<flow::Vector<double>> output{*this, "output"};
///     explicit Scale(double a) : Operation("scale"), a_(a) {}
///     void fire(flow::Context& c) override {
///       const auto& x = c.get(input);
///       auto y = c.allocate<double>(x.shape());  // a structured binding would not be capturable
///       double* py = y.data;                      // by clang before 16
///       const double* px = c.read(x);
///       const double a = a_;  // nvcc allows no init-captures in a TESSERA_HOST_DEVICE lambda
///       c.launch("scale", x.size(), [=] TESSERA_HOST_DEVICE(std::size_t i) { py[i] = a * px[i]; });
///       c.emit(output, std::move(y.array));
///     }
///     double a_;
///   };
class Operation {
 public:
  explicit Operation(std::string name);
  virtual ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& name() const noexcept { return name_; }
  /// Runs one firing: consume with Context::get, produce with Context::emit (at most one value
  /// per input; any number per output, which leave in the order emitted). Must not modify its
  /// inputs. An exception ends the firing; Flow::wait reports it with the operation's name.
  virtual void fire(Context& context) = 0;

  /// Which inputs the next firing consumes (bit i: input i), given the values waiting at each;
  /// 0: not ready. The default consumes one value from every input once all have one.
  virtual std::uint64_t ready(std::span<const std::size_t> queued) const;
  /// Whether firings may run at once (no state between firings). Results still leave each
  /// output in the order the firings started.
  virtual bool concurrent() const { return true; }
  /// Control-flow operations (Merger, Splitter, Predicate, Approximator, Turnout) route values:
  /// a value may be sent into an input they feed, and they always run on the host.
  virtual bool control_flow() const { return false; }
  /// Where firings may run; control flow runs on the host.
  virtual Runs runs() const { return control_flow() ? Runs::host : Runs::anywhere; }

  /// Keeps firings of this operation on one memory space (0: the host, i: accelerator i - 1),
  /// whatever the placement policy says (Alea's MLP keeps the network's operations on the GPU).
  void pin(std::size_t space) { pinned_ = static_cast<std::int64_t>(space); }
  std::int64_t pinned_space() const noexcept { return pinned_; }

  std::size_t num_inputs() const noexcept { return inputs_.size(); }
  std::size_t num_outputs() const noexcept { return outputs_.size(); }
  detail::InputBase& input(std::size_t i) const { return *inputs_.at(i); }
  detail::OutputBase& output(std::size_t i) const { return *outputs_.at(i); }
  /// The flow that owns the operation (after Flow::add).
  Flow& flow() const;

 private:
  friend class detail::InputBase;
  friend class detail::OutputBase;
  friend class detail::Engine;
  friend class Flow;
  std::string name_;
  std::vector<detail::InputBase*> inputs_;
  std::vector<detail::OutputBase*> outputs_;
  std::int64_t pinned_ = -1;
  Flow* flow_ = nullptr;
  std::unique_ptr<detail::OperationState> state_;
};

}  // namespace tessera::flow
