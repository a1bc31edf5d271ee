#pragma once
// tessera::submit with one more choice, for the executor: whether to record the event that ends
// the work. A device node whose successors all run on its own stream needs none (stream order
// is the dependency), and on a simulated device each record is a queue item of its own.

#include <tessera/device/submit.hpp>

#include <optional>
#include <string_view>

namespace tessera::detail {

/// As tessera::submit; when `record` is false, returns no Event at all (not even a ready one:
/// making one and dropping it touched a count every thread shares, twice a device node).
std::optional<Event> submit_work(Stream& stream, std::span<const Event* const> after,
                                 FunctionRef<void(Stream&)> enqueue, std::function<void()> on_complete,
                                 std::string_view trace_label, bool record);

}  // namespace tessera::detail
