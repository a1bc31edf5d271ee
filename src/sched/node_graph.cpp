#include "device_binding.hpp"
#include "dot_quote.hpp"
#include "executor_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/sched/node_graph.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <unordered_map>

namespace tessera {

// ---------------------------------------------------------------------------------------------
// Node

Node::Node(NodeGraph* graph) : graph_(graph) {
  execute = &detail::ExecutorImpl::execute_node;
  exec_kind = ExecKind::cpu;
}

Node::~Node() = default;

Stream* Node::stream() const noexcept { return device_ ? device_->stream : nullptr; }

Node& Node::name(std::string n) {
  graph_->throw_if_running("rename a node");
  name_ = std::move(n);
  return *this;
}

Node& Node::kind(ExecKind k) {
  graph_->throw_if_running("change a node's kind");
  if (device_ && k == ExecKind::cpu)
    throw Error("node '" + name_ + "' is bound to stream " + device_->stream->name() +
                " (emplace_on) and must stay GPU-kind; use emplace for CPU work");
  exec_kind = k;
  return *this;
}

Node& Node::precede(Node& other) {
  if (other.graph_ != graph_)
    throw Error("Node::precede: node '" + name_ + "' is in graph '" + graph_->name() + "' but node '" + other.name_ +
                "' is in graph '" + other.graph_->name() + "'; edges must stay inside one graph");
  graph_->throw_if_running("add an edge");
  successors_.push_back(&other);
  ++other.num_predecessors_;
  other.pending_.store(other.num_predecessors_, std::memory_order_relaxed);
  graph_->prepared_ = false;
  return *this;
}

Node& Node::precede_once(Node& other) {
  if (&other == this || std::find(successors_.begin(), successors_.end(), &other) != successors_.end()) return *this;
  return precede(other);
}

Node& Node::succeed(Node& other) {
  other.precede(*this);
  return *this;
}

void AsyncDone::complete() const {
  if (!node_->finished_.exchange(true, std::memory_order_acq_rel))
    node_->topology_->executor->complete_async(node_, nullptr);
}

void AsyncDone::fail(std::exception_ptr error) const {
  if (!error) error = std::make_exception_ptr(Error("AsyncDone::fail was called without an exception"));
  if (!node_->finished_.exchange(true, std::memory_order_acq_rel))
    node_->topology_->executor->complete_async(node_, std::move(error));
}

// ---------------------------------------------------------------------------------------------
// NodeGraph

NodeGraph::NodeGraph(std::string name) : name_(std::move(name)) {}

NodeGraph::~NodeGraph() {
  // Destroying a running graph would free nodes under the workers' feet: wait for the run.
  running_.wait(true, std::memory_order_acquire);
}

Node& NodeGraph::add_node() {
  throw_if_running("add a node");
  nodes_.push_back(std::unique_ptr<Node>(new Node(this)));
  prepared_ = false;
  return *nodes_.back();
}

Node& NodeGraph::add_device_node(Stream& stream) {
  Node& n = add_node();
  n.exec_kind = ExecKind::gpu;
  n.device_ = std::make_unique<detail::DeviceBinding>(&stream);
  return n;
}

Node* NodeGraph::find(std::string_view node_name) const noexcept {
  for (auto& n : nodes_)
    if (n->name_ == node_name) return n.get();
  return nullptr;
}

void NodeGraph::clear() {
  throw_if_running("clear it");
  nodes_.clear();
  sources_.clear();
  prepared_ = false;
}

void NodeGraph::absorb(NodeGraph& other) {
  if (&other == this) throw Error("NodeGraph::absorb: graph '" + name_ + "' cannot absorb itself");
  throw_if_running("absorb another graph");
  other.throw_if_running("be absorbed into another graph");
  for (auto& n : other.nodes_) {
    n->graph_ = this;
    nodes_.push_back(std::move(n));
  }
  other.nodes_.clear();
  other.sources_.clear();
  other.prepared_ = false;
  prepared_ = false;
}

void NodeGraph::throw_if_running(const char* what) const {
  if (running())
    throw Error("graph '" + name_ + "' is running: cannot " + what + " until the run's future is ready");
}

namespace {

std::string label(const Node& n, std::size_t index) {
  return n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'";
}

}  // namespace

void NodeGraph::prepare_for_run() {
  if (nodes_.empty())
    throw Error("Executor::run: graph '" + name_ + "' is empty; add nodes with emplace() before running it");
  for (auto& n : nodes_)
    if (n->work_.empty())
      throw Error("Executor::run: node '" + n->name_ + "' of graph '" + name_ + "' has no work");
  if (prepared_) return;

  // Kahn's algorithm: whatever is left with predecessors afterwards lies on or behind a cycle.
  std::unordered_map<const Node*, std::size_t> index;
  index.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) index.emplace(nodes_[i].get(), i);
  std::vector<std::uint32_t> in_degree(nodes_.size());
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    in_degree[i] = nodes_[i]->num_predecessors_;
    if (in_degree[i] == 0) ready.push_back(i);
  }
  std::vector<Node*> sources;
  for (std::size_t i : ready) sources.push_back(nodes_[i].get());
  std::size_t visited = 0;
  while (!ready.empty()) {
    std::size_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (Node* s : nodes_[i]->successors_)
      if (--in_degree[index[s]] == 0) ready.push_back(index[s]);
  }
  if (visited != nodes_.size()) {
    // Walk predecessors-left edges from any stuck node until a node repeats: that is a cycle.
    std::size_t start = 0;
    while (in_degree[start] == 0) ++start;
    std::vector<std::size_t> path;
    std::vector<std::size_t> seen_at(nodes_.size(), SIZE_MAX);
    std::size_t cur = start;
    while (seen_at[cur] == SIZE_MAX) {
      seen_at[cur] = path.size();
      path.push_back(cur);
      for (Node* s : nodes_[cur]->successors_) {
        if (in_degree[index[s]] != 0) {
          cur = index[s];
          break;
        }
      }
    }
    std::string cycle;
    for (std::size_t k = seen_at[cur]; k < path.size(); ++k) cycle += label(*nodes_[path[k]], path[k]) + " -> ";
    cycle += label(*nodes_[cur], cur);
    throw Error("Executor::run: graph '" + name_ + "' has a cycle (" + cycle +
                "); a NodeGraph must be acyclic — use run_until for repetition");
  }
  for (auto& n : nodes_) {
    n->pending_.store(n->num_predecessors_, std::memory_order_relaxed);
    if (n->device_) n->device_->waits.clear();
  }
  for (auto& n : nodes_)
    if (n->device_)
      for (Node* s : n->successors_)
        if (s->device_ && n->device_->stream != s->device_->stream) s->device_->waits.push_back(&n->device_->issued);
  sources_ = std::move(sources);
  prepared_ = true;
}

void NodeGraph::dump_dot(std::ostream& out) const {
  const auto quote = detail::dot_quote;
  std::unordered_map<const Node*, std::size_t> index;
  for (std::size_t i = 0; i < nodes_.size(); ++i) index.emplace(nodes_[i].get(), i);
  out << "digraph " << quote(name_) << " {\n  rankdir=LR;\n";
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = *nodes_[i];
    out << "  n" << i << " [label=" << quote(n.name_.empty() ? "#" + std::to_string(i) : n.name_)
        << (n.kind() == ExecKind::gpu ? ", shape=ellipse, style=filled, fillcolor=\"#b3e2b3\"" : ", shape=box") << "];\n";
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    for (Node* s : nodes_[i]->successors_) out << "  n" << i << " -> n" << index.at(s) << ";\n";
  out << "}\n";
}

std::string NodeGraph::to_dot() const {
  std::ostringstream s;
  dump_dot(s);
  return s.str();
}

}  // namespace tessera
