#pragma once
// NodeGraph: a directed acyclic graph of Nodes, built once and run many times by an Executor.
// The front ends (Graph, tasks, flows, loop chains) lower to it.

#include <tessera/sched/node.hpp>

#include <atomic>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

/// A static task graph.
///
///   tessera::NodeGraph g("pipeline");
///   auto& a = g.emplace([] { std::puts("a"); }).name("a");
///   auto& b = g.emplace([](int x) { std::printf("b %d\n", x); }, 42).name("b");
///   a.precede(b);
///   executor.run_n(g, 10).get();
class NodeGraph {
public:
  explicit NodeGraph(std::string name = "graph");
  ~NodeGraph();
  NodeGraph(const NodeGraph&) = delete;
  NodeGraph& operator=(const NodeGraph&) = delete;

  /// Adds a node running `f(args...)`; arguments are bound by value.
  template <class F, class... Args>
  Node& emplace(F&& f, Args&&... args) {
    Node& n = add_node();
    n.work_.assign_sync(detail::bind_arguments(std::forward<F>(f), std::forward<Args>(args)...));
    return n;
  }

  /// Adds a node running `f(done, args...)` that finishes when `done.complete()` is called.
  template <class F, class... Args>
  Node& emplace_async(F&& f, Args&&... args) {
    Node& n = add_node();
    n.work_.assign_async(detail::bind_arguments(std::forward<F>(f), std::forward<Args>(args)...));
    return n;
  }

  /// Adds a GPU-kind node bound to `stream`: `f(stream, args...)` enqueues device work
  /// (kernels, copies) and returns at once; the node completes when the stream reaches the end
  /// of that work, so no worker waits for the device. A device successor on the same stream
  /// just follows in stream order; one on another stream or device waits for this node's event
  /// on the device; CPU successors run once the event has fired.
  ///
  ///   tessera::Stream& s = devices.accelerator(0).compute_stream(0);
  ///   auto& k = g.emplace_on(s, [&](tessera::Stream& st) { st.enqueue_host(kernel, "kernel"); });
  ///   auto& c = g.emplace_on(devices.accelerator(1).compute_stream(0), consume);  // waits on k's event
  ///   k.precede(c);
  template <class F, class... Args>
  Node& emplace_on(Stream& stream, F&& f, Args&&... args) {
    Node& n = add_device_node(stream);
    n.work_.assign_sync([fn = detail::bind_arguments(std::forward<F>(f), std::forward<Args>(args)...),
                         s = &stream]() mutable { fn(*s); });
    return n;
  }

  const std::string& name() const noexcept { return name_; }
  std::size_t size() const noexcept { return nodes_.size(); }
  bool empty() const noexcept { return nodes_.empty(); }
  Node& node(std::size_t i) const { return *nodes_.at(i); }

  /// The first node with this name, or nullptr.
  Node* find(std::string_view node_name) const noexcept;

  /// Whether an executor is running this graph now.
  bool running() const noexcept { return running_.load(std::memory_order_acquire); }

  /// Removes every node. Throws tessera::Error while the graph is running.
  void clear();

  /// Moves every node of `other` (with its edges) into this graph, leaving `other` empty. Front
  /// ends use it to join subgraphs node to node. Throws tessera::Error when either is running
  /// or `other` is this graph.
  void absorb(NodeGraph& other);

  /// Graphviz DOT: one vertex per node (boxes for CPU, ellipses for GPU), one edge per dependency.
  void dump_dot(std::ostream& out) const;
  std::string to_dot() const;

private:
  friend class Node;
  friend class detail::ExecutorImpl;

  Node& add_node();
  Node& add_device_node(Stream& stream);
  void throw_if_running(const char* what) const;
  /// Checks the graph before a run: not empty, acyclic. Caches the source nodes.
  void prepare_for_run();

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> sources_;
  bool prepared_ = false;
  std::atomic<bool> running_{false};
};

}  // namespace tessera
