#include "event_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>

namespace tessera {

Event::Event() : state_(std::make_shared<detail::EventState>()) { state_->ready = true; }

bool Event::ready() const noexcept { return state_->is_ready(); }

void Event::synchronize() const { state_->wait(); }

Event Stream::record() {
  auto state = std::make_shared<detail::EventState>();
  record_into(state);
  return Event(std::move(state));
}

void Stream::make_ready(detail::EventState& state) { state.set(); }

bool Stream::wait_ready(const Event& e) noexcept { return e.state_->is_ready(); }

Stream& Device::compute_stream(std::size_t i) {
  if (i >= compute_.size())
    throw Error("device " + name() + " has " + std::to_string(compute_.size()) + " compute streams; stream " +
                std::to_string(i) + " does not exist");
  return *compute_[i];
}

void Device::synchronize() {
  for (auto& s : compute_) s->synchronize();
  for (auto& s : copy_) s->synchronize();
}

}  // namespace tessera
