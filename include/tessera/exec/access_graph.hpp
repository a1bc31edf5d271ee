#pragma once
// AccessGraph: the extension API a front end builds on (loops, dataflow, distribution,
// targetDP). A node declares the Buffers it reads, writes, read-writes or reduces into, a kind
// and, for device work, a device; the graph derives the edges from those declarations (the data
// layer's AccessOrder), prepares and finishes the Buffer accesses, and hands the body the data
// where it runs. It lowers to a NodeGraph that the Executor runs, built once and run many times.
//
//   tessera::AccessGraph g(memory, "scale then sum");
//   g.host("scale", {{u, tessera::Access::read_write}}, [n](const tessera::NodeData& d) {
//     double* x = d.data<double>(0);
//     for (std::size_t i = 0; i < n; ++i) x[i] *= 2;
//   });
//   g.device(devices.accelerator(0), "sum", {{u, tessera::Access::read}, {total, tessera::Access::write}},
//            [](const tessera::NodeData& d) { d.stream().enqueue_host(sum_kernel(d)); });
//   g.run(executor).get();

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/memory/access.hpp"
#include "tessera/memory/buffer.hpp"
#include "tessera/memory/row_ranges.hpp"

namespace tessera {

class Device;
class Executor;
class MemoryManager;
class Node;
class NodeGraph;
class Stream;

/// One access a node declares: which Buffer, how, and which rows (all when unset).
struct BufferAccess {
  BufferAccess(Buffer b, Access m = Access::read_write) : buffer(std::move(b)), mode(m) {}
  BufferAccess(Buffer b, Access m, RowRange r) : buffer(std::move(b)), mode(m), rows(r) {}
  Buffer buffer;
  Access mode;
  std::optional<RowRange> rows;
};

/// What a node's body gets: the base (row 0) of each declared buffer's replica where the node
/// runs, in declaration order, and, on a device, the stream to enqueue on.
class NodeData {
 public:
  template <typename T>
  T* data(std::size_t i) const {
    return static_cast<T*>(base(i));
  }
  void* base(std::size_t i) const;
  std::size_t size() const noexcept { return bases_.size(); }
  /// The device's stream (device nodes); throws tessera::Error for a host node.
  Stream& stream() const;
  /// 0 for the host, i for accelerator i - 1 (MemoryManager's numbering).
  std::size_t space() const noexcept { return space_; }

 private:
  friend class AccessGraph;
  NodeData(std::string_view node, std::vector<void*> bases, Stream* stream, std::size_t space)
      : node_(node), bases_(std::move(bases)), stream_(stream), space_(space) {}
  std::string_view node_;
  std::vector<void*> bases_;
  Stream* stream_;
  std::size_t space_;
};

using NodeBody = std::function<void(const NodeData&)>;

/// A NodeGraph whose nodes declare their Buffer accesses. Edges come from the declarations, in
/// the order nodes are added (a reader after the last writer of its rows, a writer after the
/// readers since; readers together); Node::precede adds more. Host nodes run on the executor's
/// workers under host holds (readers share rows); device nodes enqueue on `device`'s stream and
/// complete when the stream reaches the end of their work, so no worker waits for the device.
/// Build on one thread; run with run(), many times.
class AccessGraph {
 public:
  /// Nodes on devices use `memory`'s numbering of spaces; every declared buffer must belong to it.
  explicit AccessGraph(MemoryManager& memory, std::string name = "access graph");
  ~AccessGraph();
  AccessGraph(const AccessGraph&) = delete;
  AccessGraph& operator=(const AccessGraph&) = delete;

  /// A node that runs `body` on a worker with the host replicas of its buffers. Every add
  /// throws tessera::Error for an empty body, a declaration whose rows are out of the buffer, or
  /// one buffer declared twice on overlapping rows where either writes (declare it once).
  Node& host(std::string name, std::vector<BufferAccess> accesses, NodeBody body);
  /// A node whose `body` enqueues work on `stream` (a stream of a device of the buffers'
  /// MemoryManager), with the replicas in that device's space; the copies it needs are
  /// enqueued first and the stream waits for them on the device. Throws tessera::Error for a
  /// stream of a device `memory` does not have.
  Node& on(Stream& stream, std::string name, std::vector<BufferAccess> accesses, NodeBody body);
  /// As on(), on the device's stream for block `block` (Device::block_stream).
  Node& device(Device& device, std::string name, std::vector<BufferAccess> accesses, NodeBody body,
               std::size_t block = 0);

  /// The nodes, for edges (Node::precede), names and DOT export.
  NodeGraph& nodes() noexcept;
  std::size_t size() const noexcept;
  /// Runs every node once; the future rethrows a node's exception.
  std::future<void> run(Executor& executor);
  std::future<void> run_n(Executor& executor, std::size_t n);

 private:
  struct State;
  void check(const std::string& name, const std::vector<BufferAccess>& accesses, const NodeBody& body) const;
  void order(Node& node, const std::vector<BufferAccess>& accesses);
  std::unique_ptr<State> state_;
};

}  // namespace tessera
