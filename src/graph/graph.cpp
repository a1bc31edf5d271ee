#include <tessera/graph/graph.hpp>

#include "../sched/dot_quote.hpp"

#include <tessera/memory/access_log.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <unordered_map>

namespace tessera {

namespace detail {

// Subgraphs joined into a graph keep their own context, pointing at the graph's, so their
// nodes find the executor the outermost graph was run on.
struct GraphRunContext {
  std::atomic<Executor*> executor{nullptr};
  std::shared_ptr<GraphRunContext> parent;
};

Executor* run_executor(const GraphRunContext& context) noexcept {
  const GraphRunContext* c = &context;
  while (c->parent) c = c->parent.get();
  return c->executor.load(std::memory_order_acquire);
}

// One pass: a NodeGraph run once, or again while `repeat_while` holds; and the level
// bookkeeping of the operations added to it.
struct GraphStage {
  explicit GraphStage(const std::string& name) : nodes(std::make_unique<NodeGraph>(name)) {}
  std::unique_ptr<NodeGraph> nodes;
  std::function<bool()> repeat_while;
  std::vector<GraphEntry> previous;
  std::vector<GraphEntry> current;
  std::unordered_map<const Node*, GraphEntry> entries;
  std::unordered_map<const Node*, GraphNodeRole> roles;
  AccessOrder<Node*> accesses;
};

}  // namespace detail

namespace {

bool depends_on(const detail::GraphEntry& node, const detail::GraphEntry& before) {
  if (node.blocks.empty() || before.blocks.empty() || node.partitioning != before.partitioning) return true;
  for (std::size_t b : node.blocks)
    if (std::find(before.blocks.begin(), before.blocks.end(), b) != before.blocks.end()) return true;
  return false;
}

const char* dot_style(GraphNodeRole role) {
  switch (role) {
    case GraphNodeRole::split: return "shape=box";
    case GraphNodeRole::halo: return "shape=box, style=dashed";
    case GraphNodeRole::reduce_partial: return "shape=box, style=rounded";
    case GraphNodeRole::reduce_final: return "shape=diamond";
    case GraphNodeRole::sync: return "shape=doubleoctagon";
    case GraphNodeRole::plain: break;
  }
  return "shape=ellipse";
}

}  // namespace

Graph::Graph(std::string name)
    : name_(std::move(name)),
      context_(std::make_shared<detail::GraphRunContext>()),
      in_flight_(std::make_shared<std::atomic<int>>(0)) {
  stages_.push_back(std::make_unique<detail::GraphStage>(name_));
}

Graph::Graph(ExecKind kind, std::string name) : Graph(std::move(name)) { default_kind_ = kind; }

Graph::~Graph() {
  for (int n = in_flight_->load(std::memory_order_acquire); n != 0; n = in_flight_->load(std::memory_order_acquire))
    in_flight_->wait(n, std::memory_order_acquire);
}

detail::GraphStage& Graph::stage() { return *stages_.back(); }
NodeGraph& Graph::stage_graph() { return *stages_.back()->nodes; }

void Graph::begin_operation(bool new_level, const char* what) {
  if (in_flight_->load(std::memory_order_acquire) != 0)
    throw Error("Graph '" + name_ + "' is running: add operations once its runs have finished");
  detail::GraphStage& s = stage();
  if (new_level) {
    s.previous = std::move(s.current);
    s.current.clear();
  }
  operation_name_ = std::string(what) + " #" + std::to_string(operations_++);
  last_operation_.clear();
}

void Graph::begin_sync() {
  begin_operation(true, "sync");
  // Everything not yet followed by another node: waiting for these waits for everything.
  detail::GraphStage& s = stage();
  s.previous.clear();
  for (std::size_t i = 0; i < s.nodes->size(); ++i) {
    Node& n = s.nodes->node(i);
    if (n.successors().empty()) s.previous.push_back(Entry{&n, {}, 0});
  }
}

void Graph::add_plain(Node& node, GraphNodeRole role) {
  Entry e{&node, {}, 0};
  connect(e);
  record(e, role, "");
}

void Graph::connect(const Entry& e) {
  for (const Entry& p : stage().previous)
    if (depends_on(e, p)) p.node->precede(*e.node);
}

void Graph::declare_access(Node& node, const Buffer& buffer, Access mode) {
  stage().accesses.declare(&node, buffer, mode, [&node](Node* earlier, Hazard) { earlier->precede_once(node); });
}

void Graph::record(const Entry& e, GraphNodeRole role, std::string suffix) {
  detail::GraphStage& s = stage();
  s.roles[e.node] = role;
  s.entries[e.node] = e;
  s.current.push_back(e);
  e.node->name(operation_name_ + suffix);
  last_operation_.emplace_back(e.node, std::move(suffix));
}

void Graph::keep_alive(std::shared_ptr<void> p) { kept_.push_back(std::move(p)); }

void Graph::check_padded(const std::string& tensor, const std::vector<std::int64_t>& padding, const char* what) const {
  if (std::all_of(padding.begin(), padding.end(), [](std::int64_t p) { return p == 0; }))
    throw Error("Graph '" + name_ + "': tensor '" + tensor + "' is passed with " + what +
                " but has no padding to exchange; give it padding (TensorOptions::with_padding) or pass it plainly");
}

Graph& Graph::conditional(std::function<bool()> keep_running) {
  if (!keep_running) throw Error("Graph '" + name_ + "': conditional() was given an empty predicate");
  if (stage_graph().empty())
    throw Error("Graph '" + name_ + "': conditional() has nothing to repeat; add operations before it");
  stage().repeat_while = std::move(keep_running);
  stages_.push_back(std::make_unique<detail::GraphStage>(name_));
  last_operation_.clear();
  return *this;
}

Graph& Graph::named(std::string name) {
  if (last_operation_.empty())
    throw Error("Graph '" + name_ + "': named(\"" + name + "\") has no operation to name; call it right after one");
  for (auto& [node, suffix] : last_operation_) node->name(name + suffix);
  return *this;
}

Node* Graph::find(std::string_view node_name) const noexcept {
  for (const auto& s : stages_)
    if (Node* n = s->nodes->find(node_name)) return n;
  return nullptr;
}

std::size_t Graph::size() const noexcept {
  std::size_t n = 0;
  for (const auto& s : stages_) n += s->nodes->size();
  return n;
}

std::size_t Graph::count(GraphNodeRole role) const noexcept {
  std::size_t n = 0;
  for (const auto& s : stages_)
    for (const auto& [node, r] : s->roles) n += r == role ? 1 : 0;
  return n;
}

GraphNodeRole Graph::role_of(const Node& node) const {
  for (const auto& s : stages_)
    if (auto it = s->roles.find(&node); it != s->roles.end()) return it->second;
  throw Error("Graph '" + name_ + "': node '" + node.name() + "' is not one of its nodes");
}

std::size_t Graph::num_passes() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(stages_.begin(), stages_.end(), [](const auto& s) { return !s->nodes->empty(); }));
}

NodeGraph& Graph::pass(std::size_t i) const {
  for (const auto& s : stages_)
    if (!s->nodes->empty() && i-- == 0) return *s->nodes;
  throw Error("Graph '" + name_ + "' has " + std::to_string(num_passes()) + " passes; there is no pass " +
              std::to_string(i));
}

bool Graph::single_pass() const noexcept {
  std::size_t passes = 0;
  for (const auto& s : stages_)
    if (!s->nodes->empty()) {
      ++passes;
      if (s->repeat_while) return false;
    }
  return passes == 1;
}

Graph& Graph::emplace(Graph& sub) {
  join(sub, false);
  return *this;
}

Graph& Graph::then(Graph& sub) {
  join(sub, true);
  return *this;
}

void Graph::join(Graph& sub, bool new_level) {
  if (&sub == this) throw Error("Graph '" + name_ + "' cannot be added to itself as a subgraph");
  if (sub.size() == 0) throw Error("Graph '" + name_ + "': subgraph '" + sub.name_ + "' is empty");
  if (sub.in_flight_->load(std::memory_order_acquire) != 0 || in_flight_->load(std::memory_order_acquire) != 0)
    throw Error("Graph '" + name_ + "': cannot add subgraph '" + sub.name_ + "' while either graph is running");
  sub.context_->parent = context_;
  kept_.push_back(sub.context_);
  for (auto& k : sub.kept_) kept_.push_back(std::move(k));
  sub.kept_.clear();
  if (sub.ranks_ != nullptr) ranks_ = sub.ranks_;

  if (sub.single_pass()) {
    auto it = std::find_if(sub.stages_.begin(), sub.stages_.end(), [](const auto& s) { return !s->nodes->empty(); });
    detail::GraphStage& from = **it;
    begin_operation(new_level, new_level ? "then subgraph" : "emplace subgraph");
    detail::GraphStage& to = stage();
    // The subgraph's first nodes wait for this graph's previous level, block to same block.
    std::vector<Entry> sources;
    for (std::size_t i = 0; i < from.nodes->size(); ++i) {
      Node& n = from.nodes->node(i);
      if (n.num_predecessors() == 0) sources.push_back(from.entries.at(&n));
    }
    to.nodes->absorb(*from.nodes);
    for (const Entry& e : sources) connect(e);
    for (const Entry& e : from.current) to.current.push_back(e);
    for (auto& [node, e] : from.entries) to.entries.emplace(node, e);
    for (auto& [node, r] : from.roles) to.roles.emplace(node, r);
  } else {
    if (!new_level)
      throw Error("Graph '" + name_ + "': subgraph '" + sub.name_ +
                  "' repeats (conditional) or has several passes, so it cannot run beside other nodes; add it with "
                  "then()");
    ++operations_;
    last_operation_.clear();
    if (stage_graph().empty()) stages_.pop_back();
    for (auto& s : sub.stages_)
      if (!s->nodes->empty()) stages_.push_back(std::move(s));
    stages_.push_back(std::make_unique<detail::GraphStage>(name_));
  }
  sub.stages_.clear();
  sub.stages_.push_back(std::make_unique<detail::GraphStage>(sub.name_));
  sub.context_ = std::make_shared<detail::GraphRunContext>();
  sub.operations_ = 0;
  sub.last_operation_.clear();
}

void Graph::run_passes(Executor& executor) {
  for (auto& s : stages_) {
    if (s->nodes->empty()) continue;
    if (!s->repeat_while) {
      executor.run(*s->nodes).get();
      continue;
    }
    do {
      executor.run(*s->nodes).get();
    } while (s->repeat_while());
  }
}

void Graph::run_exchanging(Executor& executor) {
  // The other ranks wait for this rank's messages: a run that fails here ends them too (with
  // the error), rather than leaving them waiting.
  try {
    run_passes(executor);
  } catch (const std::exception& e) {
    ranks_->fail("Graph '" + name_ + "': " + e.what());
  } catch (...) {
    ranks_->fail("Graph '" + name_ + "': a node threw something that is not a std::exception");
  }
}

std::future<void> Graph::start(Executor& executor, std::function<void()> driver) {
  if (size() == 0) throw Error("Graph '" + name_ + "' is empty; add operations before running it");
  context_->executor.store(&executor, std::memory_order_release);
  in_flight_->fetch_add(1, std::memory_order_acq_rel);
  // Passes run one after another, and a repeating pass waits for its predicate: a driver
  // thread does the waiting so that no worker blocks.
  return std::async(std::launch::async, [driver = std::move(driver), in_flight = in_flight_] {
    struct Done {
      std::atomic<int>& n;
      ~Done() {
        n.fetch_sub(1, std::memory_order_acq_rel);
        n.notify_all();
      }
    } done{*in_flight};
    driver();
  });
}

Graph& Graph::capture(bool on) {
  capture_ = on;
  apply_capture();
  return *this;
}

void Graph::recapture() {
  for (auto& s : stages_) s->nodes->recapture();
}

void Graph::apply_capture() {
  for (auto& s : stages_)
    if (s->nodes->captures() != capture_) s->nodes->capture(capture_);
}

std::future<void> Graph::run(Executor& executor) { return run_n(executor, 1); }

std::future<void> Graph::run_n(Executor& executor, std::size_t n) {
  if (size() == 0) throw Error("Graph '" + name_ + "' is empty; add operations before running it");
  apply_capture();
  if (ranks_ != nullptr) {
    return start(executor, [this, &executor, n] {
      for (std::size_t i = 0; i < n; ++i) run_exchanging(executor);
    });
  }
  if (single_pass()) {
    context_->executor.store(&executor, std::memory_order_release);
    return executor.run_n(pass(0), n);
  }
  return start(executor, [this, &executor, n] {
    for (std::size_t i = 0; i < n; ++i) run_passes(executor);
  });
}

std::future<void> Graph::run_until(Executor& executor, std::function<bool()> stop) {
  if (!stop) throw Error("Graph '" + name_ + "': run_until was given an empty stop predicate");
  if (size() == 0) throw Error("Graph '" + name_ + "' is empty; add operations before running it");
  apply_capture();
  if (ranks_ != nullptr) {
    return start(executor, [this, &executor, stop = std::move(stop)] {
      while (!stop()) run_exchanging(executor);
    });
  }
  if (single_pass()) {
    context_->executor.store(&executor, std::memory_order_release);
    return executor.run_until(pass(0), std::move(stop));
  }
  return start(executor, [this, &executor, stop = std::move(stop)] {
    while (!stop()) run_passes(executor);
  });
}

void Graph::dump_dot(std::ostream& out) const {
  std::unordered_map<const Node*, std::size_t> id;
  for (const auto& s : stages_)
    for (std::size_t i = 0; i < s->nodes->size(); ++i) id.emplace(&s->nodes->node(i), id.size());
  out << "digraph " << detail::dot_quote(name_) << " {\n  rankdir=TB;\n";
  std::size_t pass_number = 0;
  for (const auto& s : stages_) {
    if (s->nodes->empty()) continue;
    out << "  subgraph cluster_" << pass_number << " {\n    label="
        << detail::dot_quote("pass " + std::to_string(pass_number) + (s->repeat_while ? " (repeats while its condition holds)" : ""))
        << ";\n";
    for (std::size_t i = 0; i < s->nodes->size(); ++i) {
      const Node& n = s->nodes->node(i);
      auto r = s->roles.find(&n);
      out << "    n" << id.at(&n) << " [label=" << detail::dot_quote(n.name()) << ", "
          << dot_style(r == s->roles.end() ? GraphNodeRole::plain : r->second)
          << (n.kind() == ExecKind::gpu ? ", color=\"#2a7f2a\", penwidth=2" : "") << "];\n";
    }
    out << "  }\n";
    ++pass_number;
  }
  for (const auto& s : stages_)
    for (std::size_t i = 0; i < s->nodes->size(); ++i) {
      const Node& n = s->nodes->node(i);
      for (const Node* succ : n.successors()) out << "  n" << id.at(&n) << " -> n" << id.at(succ) << ";\n";
    }
  out << "}\n";
}

std::string Graph::to_dot() const {
  std::ostringstream s;
  dump_dot(s);
  return s.str();
}

}  // namespace tessera
