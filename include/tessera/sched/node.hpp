#pragma once
// Node: one unit of work in a graph — a type-erased callable with its bound arguments, a name,
// an execution kind, and its place in the graph (predecessor count and successors).

#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/detail/work.hpp>
#include <tessera/sched/exec_kind.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera {

class NodeGraph;
class Stream;

namespace detail {
class ExecutorImpl;
struct Topology;
struct DeviceBinding;
struct CaptureGroup;
}  // namespace detail

/// Completion token handed to an asynchronous node. The node's successors run once `complete()`
/// (or `fail()`) is called, from any thread — a device event callback, an I/O thread — so no
/// worker is parked while the work is in flight. Call exactly one of them, once: after that the
/// run may finish and the graph be destroyed, so the token must not be used again. A body that
/// throws instead finishes the node itself (its exception reaches the run's future).
///
///   graph.emplace_async([](tessera::AsyncDone done) {
///     start_io([done] { done.complete(); });
///   });
class AsyncDone {
public:
  void complete() const;
  void fail(std::exception_ptr error) const;

private:
  friend AsyncDone detail_make_async_done(Node& node) noexcept;
  explicit AsyncDone(Node* node) : node_(node) {}
  Node* node_;
};

inline AsyncDone detail_make_async_done(Node& node) noexcept { return AsyncDone(&node); }

/// A node of a NodeGraph. Created by `NodeGraph::emplace`, owned by its graph, wired with
/// `precede`/`succeed`.
///
///   auto& a = graph.emplace([] { load(); }).name("load");
///   auto& b = graph.emplace(scale, 2.0).name("scale");   // scale(2.0) when run
///   a.precede(b);
class Node : private detail::Task {
public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  const std::string& name() const noexcept { return name_; }
  Node& name(std::string n);

  ExecKind kind() const noexcept { return exec_kind; }
  Node& kind(ExecKind k);

  /// Makes `other` run after this node. Returns *this so edges chain.
  Node& precede(Node& other);
  /// As precede, unless the edge is there already or `other` is this node: what a front end
  /// calls for each dependency its access declarations yield (several may name one node).
  Node& precede_once(Node& other);
  /// Makes this node run after `other`.
  Node& succeed(Node& other);

  std::span<Node* const> successors() const noexcept { return successors_; }
  std::size_t num_predecessors() const noexcept { return num_predecessors_; }
  /// Predecessors still to finish in the current run; equals num_predecessors() between runs.
  std::size_t pending() const noexcept { return pending_.load(std::memory_order_relaxed); }
  bool is_async() const noexcept { return work_.is_async(); }
  /// The stream a device node (NodeGraph::emplace_on) enqueues its work on; nullptr otherwise.
  Stream* stream() const noexcept;
  NodeGraph& graph() const noexcept { return *graph_; }

private:
  friend class NodeGraph;
  friend class AsyncDone;
  friend class detail::ExecutorImpl;

  explicit Node(NodeGraph* graph);

  std::atomic<std::uint32_t> pending_{0};
  std::uint32_t num_predecessors_ = 0;
  // Async and device nodes: the first of complete()/fail() (or a throwing body) claims `finished_`; the
  // node is done once both the body has returned and the token has fired (`async_holds_` == 0),
  // so a completion arriving before the body returns cannot free the body under its feet.
  std::atomic<bool> finished_{false};
  std::atomic<std::uint8_t> async_holds_{0};
  detail::Topology* topology_ = nullptr;
  std::unique_ptr<detail::DeviceBinding> device_;  // set for device nodes only
  detail::CaptureGroup* group_ = nullptr;          // the captured part it belongs to, if any
  detail::Work work_;
  std::vector<Node*> successors_;
  std::string name_;
  NodeGraph* graph_;
};

template <class F>
void detail::Work::assign_async(F&& f) {
  using Stored = std::decay_t<F>;
  emplace<Stored>(std::forward<F>(f));
  invoke_ = [](void* obj, Node& node) { (*static_cast<Stored*>(obj))(detail_make_async_done(node)); };
  async_ = true;
}

}  // namespace tessera
