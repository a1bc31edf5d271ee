#pragma once
// flow::Flow: a reactive dataflow graph and its runtime (Alea §2-3). The flow owns its
// operations; values sent into its inputs fire operations as soon as their readiness rule holds,
// each firing a Job on the executor (CPU kind on the host, GPU kind where it submits to a
// device), placed by a policy over every device of the DeviceSet. Several input sets may be in
// flight at once: the order of values along every path is kept.

#include <any>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/flow/operation.hpp"
#include "tessera/flow/port.hpp"
#include "tessera/memory/memory_manager.hpp"

namespace tessera {
class DeviceSet;
class Executor;
}  // namespace tessera

namespace tessera::flow {

/// How firings are put on devices (Alea §3.3). Operations that run on the host only, and flows
/// without accelerators, run on the host whatever the policy.
enum class Placement {
  /// Every firing on the host's workers.
  host,
  /// Every firing of one input set on one accelerator (set i on accelerator i mod N): no copies
  /// between devices; many sets in flight use every device.
  per_input_set,
  /// Each firing where most of its input bytes already are, ties to the accelerator with the
  /// fewest firings in flight (Alea's data-affine scheduling).
  data_affine,
};

struct FlowOptions {
  /// Whose workers run the firings; null: default_executor().
  Executor* executor = nullptr;
  Placement placement = Placement::data_affine;
  /// Fuse operations the first time the flow runs (flow/fusion.hpp).
  bool fusion = true;
  /// Budgets of the flow's memory spaces.
  MemoryOptions memory;
  /// Record a decision mark per firing ("op on sim:1") on the trace track "flow placement".
  bool trace_placement = false;
};

/// Counters of what a flow did since it was made.
struct FlowStats {
  std::size_t firings = 0;
  std::size_t kernels = 0;                     ///< Context::launch, library calls
  std::vector<std::size_t> firings_per_space;  ///< index 0: host, i: accelerator i - 1
  std::size_t fused = 0;                       ///< operation pairs fusion replaced
};

/// Identifies values that belong together (one option set, one Markov chain).
struct InputSet {
  std::uint64_t id = 0;
};

namespace detail {
class Engine;
}

/// A dataflow graph with its runtime.
///
///   auto devices = tessera::DeviceSet::select("sim:2");
///   flow::Flow f(devices);
///   auto& square = f.add<flow::Map<...>>(...);          // or the catalog's factories
///   f.on_receive(square.output, [](const flow::Vector<double>& v) { ... });
///   f.send(square.input, flow::Vector<double>(f, values));
///   f.wait();    // every value sent has gone through; rethrows a firing's error
class Flow {
 public:
  /// `devices` must outlive the flow.
  explicit Flow(DeviceSet& devices, FlowOptions options = {});
  /// Waits for firings in flight, then drops values still queued.
  ~Flow();
  Flow(const Flow&) = delete;
  Flow& operator=(const Flow&) = delete;

  /// Adds an operation the flow owns and returns it.
  template <typename Op, typename... Args>
  Op& add(Args&&... args) {
    static_assert(std::is_base_of_v<Operation, Op>, "Flow::add makes flow::Operations");
    auto op = std::make_unique<Op>(std::forward<Args>(args)...);
    Op& ref = *op;
    adopt(std::move(op));
    return ref;
  }
  /// Removes `op`, disconnecting it. Throws tessera::Error while values are in flight in the
  /// flow (wait() first) or for an operation of another flow.
  void remove(Operation& op);

  /// Starts a new input set.
  InputSet new_input_set();
  /// Sends `value` into `port`, an input that no operation feeds or that a control-flow
  /// operation feeds, as part of `set`. Throws tessera::Error for an input fed by a data
  /// operation (its values would interleave with the producer's), a port of a removed
  /// operation or of another flow.
  template <typename T, typename O>
  void send(InputPort<T, O>& port, T value, InputSet set) {
    send_token(port, detail::make_token(std::move(value)), set.id);
  }
  /// As above, in a new input set.
  template <typename T, typename O>
  void send(InputPort<T, O>& port, T value) {
    send(port, std::move(value), new_input_set());
  }
  /// Calls `callback(value)`, or `callback(value, input_set)`, for every value leaving `port`, in
  /// order, on a worker; the input set relates a result to the values sent.
  template <typename T, typename O, typename F>
  void on_receive(OutputPort<T, O>& port, F callback) {
    if constexpr (std::is_invocable_v<F&, const T&, InputSet>) {
      detail::add_receiver(port, [cb = std::move(callback)](const std::any& a, std::uint64_t set) mutable {
        cb(*std::any_cast<T>(&a), InputSet{set});
      });
    } else {
      static_assert(std::is_invocable_v<F&, const T&>,
                    "on_receive: the callback takes (const T&) or (const T&, InputSet)");
      detail::add_receiver(
          port, [cb = std::move(callback)](const std::any& a, std::uint64_t) mutable { cb(*std::any_cast<T>(&a)); });
    }
  }

  /// Blocks until no value is in flight: every firing has run and its device work finished.
  /// Throws tessera::Error naming the operation whose firing (or callback) threw first, or the
  /// operations where values wait that can never fire (a join missing its other input).
  void wait();
  /// Drops the values waiting at inputs (after wait() reported values that can never fire, or a
  /// failure left a cycle's values behind) and returns how many; the flow is then empty and
  /// usable. Throws tessera::Error while firings are in flight.
  std::size_t discard_pending();
  /// Whether values are in flight now.
  bool busy() const noexcept;

  FlowStats stats() const;
  /// Rewrites the graph with the registered fusers now (the first send does it otherwise).
  void fuse();
  /// The operations now in the graph (after fusion: the fused ones in place of their parts).
  std::vector<const Operation*> operations() const;

  DeviceSet& devices() const noexcept;
  MemoryManager& memory() noexcept;
  Executor& executor() const noexcept;
  const FlowOptions& options() const noexcept;
  /// Internal: the runtime behind the flow.
  detail::Engine* engine_for_ports() const noexcept;

 private:
  friend class detail::Engine;
  void adopt(std::unique_ptr<Operation> op);
  void send_token(detail::InputBase& port, detail::Token token, std::uint64_t set);
  std::unique_ptr<detail::Engine> engine_;
};

}  // namespace tessera::flow
