#pragma once
// What a device node (NodeGraph::emplace_on) carries beyond a plain node: its stream, the
// event its work ends with in the current run, and the events of the device nodes it depends
// on, which it waits for on the device rather than on the host.

#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>

#include <vector>

namespace tessera {
class Node;
}

namespace tessera::detail {

struct DeviceBinding {
  explicit DeviceBinding(Stream* s) : stream(s) {}

  Stream* stream;
  /// Recorded on `stream` right after the node's body enqueued its work; written before the
  /// node releases its device successors, read by them after they are released. Left as it is
  /// (a ready Event since the graph was last prepared) where nothing records it.
  Event issued;
  /// The `issued` events of device predecessors on other streams (filled by
  /// NodeGraph::prepare_for_run): what this node's stream waits for on the device. A predecessor
  /// on the same stream is ordered by the stream itself.
  std::vector<const Event*> waits;
  /// Every successor is a device node: finished when they are released, without a callback.
  bool completes_at_issue = false;
  /// Some device successor runs on another stream and waits for `issued` on the device.
  bool records_event = true;
};

}  // namespace tessera::detail
