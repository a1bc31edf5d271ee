// submit: the device submission path every front end shares (see device/submit.hpp).
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>
#include "submit_work.hpp"

#include <exception>
#include <utility>

namespace tessera {
namespace {

// Ends the span when enqueue returns or throws, so a failed submission leaves none open.
struct TraceSpan {
  Stream* stream;  // nullptr: no label, no span
  ~TraceSpan() {
    if (stream) stream->end_span();
  }
};

}  // namespace

Event submit(Stream& stream, std::span<const Event* const> after, FunctionRef<void(Stream&)> enqueue,
             std::function<void()> on_complete, std::string_view trace_label) {
  return *detail::submit_work(stream, after, enqueue, std::move(on_complete), trace_label, true);
}

namespace detail {

std::optional<Event> submit_work(Stream& stream, std::span<const Event* const> after,
                                 FunctionRef<void(Stream&)> enqueue, std::function<void()> on_complete,
                                 std::string_view trace_label, bool record) {
  try {
    stream.device().make_current();
    for (const Event* e : after) stream.wait(*e);
    {
      TraceSpan span{trace_label.empty() ? nullptr : &stream};
      if (span.stream) stream.begin_span(trace_label);
      enqueue(stream);
    }
    std::optional<Event> issued;
    if (record) issued = stream.record();
    if (on_complete) stream.then(std::move(on_complete));
    return issued;
  } catch (...) {
    const std::exception_ptr failure = std::current_exception();
    try {
      stream.synchronize();
    } catch (...) {  // the first failure is the one reported
    }
    std::rethrow_exception(failure);
  }
}

}  // namespace detail
}  // namespace tessera
