#pragma once
// NodeGraph: a directed acyclic graph of Nodes, built once and run many times by an Executor.
// The front ends (Graph, tasks, flows, loop chains) lower to it.

#include <tessera/sched/node.hpp>

#include <atomic>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera {

namespace detail {
struct CaptureGroup;
}

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

  /// Captures the graph's device part and replays it (CUDA: one CUDA graph per connected part,
  /// launched with cudaGraphLaunch; sim: a recorded program per stream). A promise that device
  /// nodes enqueue the same work every run: from the second run after the graph last changed,
  /// each part of device nodes that no host node separates is recorded once and from then on
  /// launched whole, its bodies not called again. Host nodes run every time, between the parts
  /// they separate. Any change to the graph (nodes, edges, kinds) records afresh; after
  /// changing what bodies enqueue (kernel arguments), call recapture(). Where some device node's
  /// streams cannot record (host streams, several CUDA devices in one part), the graph runs as
  /// if not captured and capture_refusal() says why.
  ///
  ///   graph.capture();
  ///   executor.run_n(graph, 1000).get();   // run 1 as usual, run 2 records, 3-1000 replay
  NodeGraph& capture(bool on = true);
  bool captures() const noexcept { return capture_; }
  /// The next run records the device part again; where the recording has the same shape, the
  /// replayed work is updated in place (CUDA: cudaGraphExecUpdate) rather than rebuilt.
  void recapture();
  /// Why a capturing graph does not replay its device part, or empty: streams that cannot
  /// record, or a recording that depended on state a replay would not see (its bodies had
  /// buffers copied in); then the graph runs as if not captured until it changes. Read it
  /// between runs.
  const std::string& capture_refusal() const noexcept { return capture_refusal_; }
  /// How many times the device part has been recorded since capture() (tests, traces).
  std::size_t recordings() const noexcept { return recordings_.load(std::memory_order_relaxed); }

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

  /// Groups the device nodes into CaptureGroups (or says why not, in capture_refusal_).
  void prepare_captures(const std::vector<std::size_t>& topological_order);
  /// Whether the run about to start replays captured parts (counts the run).
  bool next_run_grouped() noexcept;
  /// A recording cannot be replayed: the graph runs uncaptured until it changes (called by the
  /// executor while the graph runs).
  void spoil_capture(std::string why);

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> sources_;
  bool prepared_ = false;
  bool capture_ = false;
  std::size_t runs_since_prepare_ = 0;
  std::vector<std::unique_ptr<detail::CaptureGroup>> groups_;
  std::vector<detail::Task*> grouped_sources_;  // host sources and groups nothing outside precedes
  std::string capture_refusal_;
  std::atomic<std::size_t> recordings_{0};
  std::mutex spoiled_mutex_;
  bool capture_spoiled_ = false;
  std::atomic<bool> running_{false};
};

}  // namespace tessera
