#pragma once
// A captured part of a NodeGraph (NodeGraph::capture): device nodes that run as one recording,
// launched whole once every node outside it that they depend on has finished, and finished
// whole once the device has run all of it. See NodeGraph::prepare_captures for how the parts are
// chosen so that launching them whole never closes a cycle.

#include <tessera/device/capture.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/sched/detail/task.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {
class Node;
}

namespace tessera::detail {

struct Topology;

struct CaptureGroup : Task {
  std::vector<Node*> nodes;      // in an order the graph's edges allow
  std::vector<Stream*> streams;  // those the nodes run on; [0] is where the recording launches
  /// Per node, the events of predecessors inside the group on other streams (the only waits a
  /// recording needs: everything outside has finished before the launch).
  std::vector<std::vector<const Event*>> waits;
  /// Edges from outside into the group, and out of it (one entry per edge, like a node's).
  std::uint32_t external_predecessors = 0;
  std::vector<Node*> successors;
  std::atomic<std::uint32_t> pending{0};
  /// The launch's and the stream's: the group finishes when both are done.
  std::atomic<std::uint8_t> holds{0};

  std::unique_ptr<CapturedWork> work;  // null until captured
  /// What the recording did besides its work (the memory layer's bookkeeping), redone after
  /// each replay; a replay waits for a new recording while one of them is not ready.
  std::vector<std::shared_ptr<ReplayEffect>> effects;
  bool stale = true;                   // record again at the next grouped run
  Topology* topology = nullptr;
};

}  // namespace tessera::detail
