// submit: the device submission path every front end shares (see device/submit.hpp).
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>

#include <exception>
#include <utility>

namespace tessera {

Event submit(Stream& stream, std::span<const Event* const> after, FunctionRef<void(Stream&)> enqueue,
             std::function<void()> on_complete) {
  try {
    stream.device().make_current();
    for (const Event* e : after) stream.wait(*e);
    enqueue(stream);
    Event issued = stream.record();
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

}  // namespace tessera
