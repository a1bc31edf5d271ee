#include "capture_group.hpp"
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
  if (exec_kind != k) graph_->prepared_ = false;
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
  groups_.clear();  // recordings refer to the nodes' streams, not the other way round
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

NodeGraph& NodeGraph::capture(bool on) {
  throw_if_running(on ? "start capturing it" : "stop capturing it");
  if (capture_ != on) prepared_ = false;
  capture_ = on;
  return *this;
}

void NodeGraph::recapture() {
  throw_if_running("record it again");
  for (auto& g : groups_) g->stale = true;
  if (capture_spoiled_) {  // try again: what spoiled the last recording may have settled
    capture_spoiled_ = false;
    capture_refusal_.clear();
  }
}

bool NodeGraph::next_run_grouped() noexcept {
  // The first run after a change settles where data lives (copies a body enqueues once, say)
  // and is not recorded: replaying it would repeat that first run's work every time.
  bool spoiled;
  {
    std::lock_guard lock(spoiled_mutex_);
    spoiled = capture_spoiled_;
  }
  const bool grouped = capture_ && !groups_.empty() && !spoiled && runs_since_prepare_ >= 1;
  ++runs_since_prepare_;
  return grouped;
}

void NodeGraph::spoil_capture(std::string why) {
  std::lock_guard lock(spoiled_mutex_);
  if (capture_spoiled_) return;
  capture_spoiled_ = true;
  capture_refusal_ = std::move(why);
}

void NodeGraph::clear() {
  throw_if_running("clear it");
  groups_.clear();
  grouped_sources_.clear();
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
  other.groups_.clear();
  other.grouped_sources_.clear();
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
  std::vector<std::size_t> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    std::size_t i = ready.back();
    ready.pop_back();
    ++visited;
    order.push_back(i);
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
  for (auto& n : nodes_) {
    if (!n->device_) continue;
    // Only device successors: nothing on the host waits for this node's work, so it is finished
    // once they are released (each sink's completion still covers it) and needs no callback.
    n->device_->completes_at_issue =
        !n->successors_.empty() && std::all_of(n->successors_.begin(), n->successors_.end(),
                                               [](const Node* s) { return s->device_ != nullptr; });
    n->device_->records_event = false;
    n->device_->issued = Event();  // nothing of an earlier structure's runs
    for (Node* s : n->successors_)
      if (s->device_ && n->device_->stream != s->device_->stream) {
        s->device_->waits.push_back(&n->device_->issued);
        n->device_->records_event = true;
      }
  }
  sources_ = std::move(sources);
  prepare_captures(order);
  runs_since_prepare_ = 0;
  prepared_ = true;
}

void NodeGraph::prepare_captures(const std::vector<std::size_t>& order) {
  groups_.clear();
  grouped_sources_.clear();
  capture_refusal_.clear();
  capture_spoiled_ = false;
  for (auto& n : nodes_) n->group_ = nullptr;
  if (!capture_) return;

  // A device node's level is the most host nodes on any path to it. Device nodes of one level
  // that edges of that level connect form a part: a path leaving a part through a host node
  // reaches only higher levels, so launching each part whole can never wait on itself.
  const std::size_t n = nodes_.size();
  std::unordered_map<const Node*, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(nodes_[i].get(), i);
  std::vector<std::size_t> level(n, 0), root(n);
  for (std::size_t i = 0; i < n; ++i) root[i] = i;
  auto find = [&](std::size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (std::size_t i : order)
    for (Node* s : nodes_[i]->successors_) {
      const std::size_t j = index[s];
      level[j] = std::max(level[j], level[i] + (nodes_[i]->device_ ? 0 : 1));
    }
  for (std::size_t i : order)
    for (Node* s : nodes_[i]->successors_) {
      const std::size_t j = index[s];
      if (nodes_[i]->device_ && s->device_ && level[i] == level[j]) root[find(i)] = find(j);
    }
  std::unordered_map<std::size_t, detail::CaptureGroup*> by_root;
  for (std::size_t i : order) {
    Node* node = nodes_[i].get();
    if (!node->device_) continue;
    detail::CaptureGroup*& g = by_root[find(i)];
    if (g == nullptr) {
      groups_.push_back(std::make_unique<detail::CaptureGroup>());
      g = groups_.back().get();
      g->execute = &detail::ExecutorImpl::execute_group;
      g->exec_kind = ExecKind::gpu;
    }
    g->nodes.push_back(node);
    if (std::find(g->streams.begin(), g->streams.end(), node->device_->stream) == g->streams.end())
      g->streams.push_back(node->device_->stream);
  }
  if (groups_.empty()) {
    capture_refusal_ = "graph '" + name_ + "' has no device nodes to capture";
    return;
  }
  for (auto& g : groups_) {
    const std::span<Stream* const> others(g->streams.data() + 1, g->streams.size() - 1);
    if (std::string why = g->streams[0]->capture_refusal(others); !why.empty()) {
      capture_refusal_ = "node '" + g->nodes[0]->name_ + "' and the device nodes it is captured with: " + why;
      groups_.clear();
      return;
    }
  }
  for (auto& g : groups_) {
    g->waits.resize(g->nodes.size());
    for (std::size_t k = 0; k < g->nodes.size(); ++k) g->nodes[k]->group_ = g.get();
  }
  for (auto& g : groups_) {
    for (std::size_t k = 0; k < g->nodes.size(); ++k) {
      Node* u = g->nodes[k];
      for (Node* s : u->successors_) {
        if (s->group_ != g.get()) {
          g->successors.push_back(s);
          if (s->group_ != nullptr) ++s->group_->external_predecessors;
          continue;
        }
        if (s->device_->stream == u->device_->stream) continue;
        const auto at = std::find(g->nodes.begin(), g->nodes.end(), s) - g->nodes.begin();
        g->waits[static_cast<std::size_t>(at)].push_back(&u->device_->issued);
      }
    }
  }
  for (auto& node : nodes_)
    if (!node->device_)
      for (Node* s : node->successors_)
        if (s->group_ != nullptr) ++s->group_->external_predecessors;
  for (auto& node : nodes_)
    if (!node->device_ && node->num_predecessors_ == 0) grouped_sources_.push_back(node.get());
  for (auto& g : groups_) {
    g->pending.store(g->external_predecessors, std::memory_order_relaxed);
    if (g->external_predecessors == 0) grouped_sources_.push_back(g.get());
  }
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
