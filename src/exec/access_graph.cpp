// AccessGraph: declared accesses become edges (AccessOrder), host holds on workers, and
// prepare/finish around device work on a stream.
#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/exec/access_graph.hpp>
#include <tessera/memory/access_log.hpp>
#include <tessera/memory/detail/host_holds.hpp>
#include <tessera/memory/detail/stream_accesses.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/node_graph.hpp>

#include <utility>

namespace tessera {

struct AccessGraph::State {
  State(MemoryManager& m, std::string name) : memory(m), nodes(std::move(name)) {}
  MemoryManager& memory;
  NodeGraph nodes;
  AccessOrder<Node*> order;
};

namespace {

RowRange rows_of(const BufferAccess& a) { return a.rows.value_or(a.buffer.all()); }

}  // namespace

void* NodeData::base(std::size_t i) const {
  if (i >= bases_.size())
    throw Error("node '" + std::string(node_) + "' asked for buffer " + std::to_string(i) + " but declared " +
                std::to_string(bases_.size()) + "; data(i) follows the order of the declarations");
  return bases_[i];
}

Stream& NodeData::stream() const {
  if (stream_ == nullptr)
    throw Error("node '" + std::string(node_) +
                "' runs on the host and has no stream; add it with AccessGraph::on or device to enqueue device work");
  return *stream_;
}

AccessGraph::AccessGraph(MemoryManager& memory, std::string name)
    : state_(std::make_unique<State>(memory, std::move(name))) {}
AccessGraph::~AccessGraph() = default;

NodeGraph& AccessGraph::nodes() noexcept { return state_->nodes; }
std::size_t AccessGraph::size() const noexcept { return state_->nodes.size(); }
std::future<void> AccessGraph::run(Executor& executor) { return executor.run(state_->nodes); }
std::future<void> AccessGraph::run_n(Executor& executor, std::size_t n) { return executor.run_n(state_->nodes, n); }

void AccessGraph::check(const std::string& name, const std::vector<BufferAccess>& accesses, const NodeBody& body) const {
  const std::string where = "AccessGraph '" + state_->nodes.name() + "', node '" + name + "': ";
  if (!body) throw Error(where + "the body is empty; give a callable taking const tessera::NodeData&");
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    const BufferAccess& a = accesses[i];
    const RowRange r = rows_of(a);
    if (r.empty() || r.end > a.buffer.rows())
      throw Error(where + "declares rows " + r.to_string() + " of buffer '" + a.buffer.name() + "', which has rows [0," +
                  std::to_string(a.buffer.rows()) + "); declare a non-empty range inside it, or no rows for all");
    for (std::size_t j = 0; j < i; ++j) {
      const BufferAccess& b = accesses[j];
      if (b.buffer.key() != a.buffer.key() || !rows_of(b).overlaps(r)) continue;
      if (access_writes(a.mode) || access_writes(b.mode))
        throw Error(where + "declares buffer '" + a.buffer.name() + "' twice on overlapping rows (" +
                    std::string(to_string(b.mode)) + " " + rows_of(b).to_string() + ", " +
                    std::string(to_string(a.mode)) + " " + r.to_string() +
                    "); declare it once, with read_write if the node both reads and writes it");
    }
  }
}

void AccessGraph::order(Node& node, const std::vector<BufferAccess>& accesses) {
  for (const BufferAccess& a : accesses)
    state_->order.declare(&node, a.buffer, a.mode, rows_of(a),
                          [&node](Node* earlier, Hazard) { earlier->precede_once(node); });
}

Node& AccessGraph::host(std::string name, std::vector<BufferAccess> accesses, NodeBody body) {
  check(name, accesses, body);
  Node& n = state_->nodes.emplace([accesses, body = std::move(body), label = name]() mutable {
    detail::HostHolds holds;
    std::vector<void*> bases;
    bases.reserve(accesses.size());
    for (BufferAccess& a : accesses) bases.push_back(holds.hold(a.buffer, a.mode, rows_of(a)));
    body(NodeData(label, std::move(bases), nullptr, 0));
  });
  n.name(name);
  order(n, accesses);
  return n;
}

Node& AccessGraph::on(Stream& stream, std::string name, std::vector<BufferAccess> accesses, NodeBody body) {
  check(name, accesses, body);
  const std::size_t space = state_->memory.space_of(stream.device());
  Node& n = state_->nodes.emplace_on(stream, [accesses, body = std::move(body), label = name, space](Stream& s) mutable {
    detail::StreamAccesses prepared(space, s);
    std::vector<void*> bases;
    bases.reserve(accesses.size());
    for (BufferAccess& a : accesses) bases.push_back(prepared.prepare(a.buffer, a.mode, rows_of(a)));
    body(NodeData(label, std::move(bases), &s, space));
    prepared.finish();
  });
  n.name(name);
  order(n, accesses);
  return n;
}

Node& AccessGraph::device(Device& device, std::string name, std::vector<BufferAccess> accesses, NodeBody body,
                          std::size_t block) {
  return on(device.block_stream(block), std::move(name), std::move(accesses), std::move(body));
}

}  // namespace tessera
