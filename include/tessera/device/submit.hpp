#pragma once
// The one way work reaches a device. The executor's device nodes (and so AccessGraph and Graph
// device work), the task layer's GPU tasks and copies, and for_each/reduce device blocks all
// submit through it, so ordering (device-side waits, never a parked worker), completion (a stream
// callback) and failure (drain what was enqueued, then report) are the same under every front end.

#include <tessera/core/function_ref.hpp>
#include <tessera/device/stream.hpp>

#include <functional>
#include <span>
#include <string_view>

namespace tessera {

/// Submits one piece of device work to `stream`:
/// 1. makes the stream's device current on this thread (kernel launches go to its GPU);
/// 2. has the stream wait, on the device, for each event in `after`;
/// 3. calls `enqueue(stream)`, which enqueues the work (kernels, copies, host functions) and
///    returns without waiting for it;
/// 4. records and returns the event that ends the work, and, when `on_complete` is set, has it
///    called on a host thread once the stream passes that event (it must not enqueue work).
/// When `enqueue` throws, the stream is first drained of whatever it had enqueued, so no device
/// work still touches the caller's data, and the exception is rethrown; `on_complete` is then
/// never called. A non-empty `trace_label` names the work in traces: the stream brackets what
/// `enqueue` puts on it, kernels launched through native_handle() included (Stream::begin_span).
///
///   tessera::Stream& s = device.compute_stream(0);
///   tessera::Event e = tessera::submit(s, {}, [&](tessera::Stream& st) { st.enqueue_host(kernel, "kernel"); },
///                                      [&] { done.count_down(); });
Event submit(Stream& stream, std::span<const Event* const> after, FunctionRef<void(Stream&)> enqueue,
             std::function<void()> on_complete = {}, std::string_view trace_label = {});

}  // namespace tessera
