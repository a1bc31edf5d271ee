#pragma once
// Typed ports of dataflow operations (Alea §2.1) and connect(). An input port owns a FIFO
// stream of the values that reached it; an output port lists the inputs it feeds and the
// callbacks (on_receive) that see its results. connect() only compiles for ports of one value
// type, and where a fuser exists for the two operations' types it records the pair, so the
// first run may fuse them (flow/fusion.hpp).

#include <any>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include "tessera/flow/detail/token.hpp"

namespace tessera::flow {

class Operation;

/// Which ports of a producer and a consumer a fuser joins.
struct FuseSite {
  std::size_t producer_output = 0;
  std::size_t consumer_input = 0;
};

namespace detail {

class InputBase;
class OutputBase;

class PortBase {
 public:
  PortBase(const PortBase&) = delete;
  PortBase& operator=(const PortBase&) = delete;
  Operation& owner() const noexcept { return *owner_; }
  std::size_t index() const noexcept { return index_; }
  const std::string& name() const noexcept { return name_; }
  std::type_index type() const noexcept { return type_; }
  /// "operation.port", for messages.
  std::string full_name() const;

 protected:
  PortBase(Operation* owner, std::size_t index, std::type_index type, std::string name)
      : owner_(owner), index_(index), type_(type), name_(std::move(name)) {}
  ~PortBase() = default;

 private:
  friend class Engine;
  friend class Rewire;
  Operation* owner_;
  std::size_t index_;
  std::type_index type_;
  std::string name_;
};

class InputBase : public PortBase {
 public:
  InputBase(Operation& owner, std::type_index type, std::string name);
  /// The outputs connected here.
  const std::vector<OutputBase*>& sources() const noexcept { return sources_; }
  /// Values waiting (read under the owner's lock by the engine; approximate elsewhere).
  std::size_t queued() const noexcept { return queue_.size(); }

 private:
  friend class Engine;
  friend class Rewire;
  friend void connect_ports(OutputBase&, InputBase&);
  std::deque<Token> queue_;
  std::vector<OutputBase*> sources_;
  InputBase* forward_ = nullptr;        // set when fusion replaced the owner
  OutputBase* fused_source_ = nullptr;  // the producer fusion joined this input to
};

using Receiver = std::function<void(const std::any& value, std::uint64_t input_set)>;
using FuserFn = std::unique_ptr<Operation> (*)(Operation& producer, Operation& consumer, const FuseSite& site);

class OutputBase : public PortBase {
 public:
  OutputBase(Operation& owner, std::type_index type, std::string name);
  const std::vector<InputBase*>& targets() const noexcept { return targets_; }
  std::size_t num_receivers() const noexcept { return receivers_.size(); }

 private:
  friend class Engine;
  friend class Rewire;
  friend void connect_ports(OutputBase&, InputBase&);
  friend void add_receiver(OutputBase&, Receiver);
  std::vector<InputBase*> targets_;
  std::vector<Receiver> receivers_;
  OutputBase* forward_ = nullptr;
};

/// Records the connection; throws tessera::Error for ports of a removed operation, ports of two
/// different flows, or a flow with values in flight.
void connect_ports(OutputBase& out, InputBase& in);
void add_receiver(OutputBase& out, Receiver r);
/// Records that `fuser` may fuse the producer of `out` with the consumer of `in`.
void add_fuser(OutputBase& out, InputBase& in, FuserFn fuser);

}  // namespace detail

/// An input of an operation, receiving values of type T. `Owner` (optional) names the
/// operation's type, which lets connect() find a fuser for the pair.
///
///   flow::InputPort<flow::Vector<double>> input{*this, "input"};   // inside an Operation
template <typename T, typename Owner = void>
class InputPort;

template <typename T>
class InputPort<T, void> : public detail::InputBase {
 public:
  using value_type = T;
  explicit InputPort(Operation& owner, std::string name = "input")
      : detail::InputBase(owner, typeid(T), std::move(name)) {}
};

template <typename T, typename Owner>
class InputPort : public InputPort<T, void> {
 public:
  using owner_type = Owner;
  using InputPort<T, void>::InputPort;
};

/// An output of an operation, producing values of type T.
template <typename T, typename Owner = void>
class OutputPort;

template <typename T>
class OutputPort<T, void> : public detail::OutputBase {
 public:
  using value_type = T;
  explicit OutputPort(Operation& owner, std::string name = "output")
      : detail::OutputBase(owner, typeid(T), std::move(name)) {}
};

template <typename T, typename Owner>
class OutputPort : public OutputPort<T, void> {
 public:
  using owner_type = Owner;
  using OutputPort<T, void>::OutputPort;
};

/// Connects `out` to `in`. Only ports of one value type connect: anything else does not
/// compile. An output may feed many inputs (each gets every value) and an input may be fed by
/// many outputs (values merge in arrival order); cycles are allowed.
///
///   flow::connect(splitter.first, mvp.left);
template <typename T, typename O1, typename O2>
void connect(OutputPort<T, O1>& out, InputPort<T, O2>& in) {
  detail::connect_ports(out, in);
  if constexpr (!std::is_void_v<O1> && !std::is_void_v<O2>) {
    if constexpr (requires(O1 & a, O2 & b, const FuseSite& s) {
                    { fuse(a, b, s) } -> std::convertible_to<std::unique_ptr<Operation>>;
                  }) {
      detail::add_fuser(
          out, in, +[](Operation& a, Operation& b, const FuseSite& s) -> std::unique_ptr<Operation> {
            return fuse(static_cast<O1&>(a), static_cast<O2&>(b), s);
          });
    }
  }
}

}  // namespace tessera::flow
