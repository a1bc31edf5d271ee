#include "event_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/capture.hpp>
#include <tessera/device/device.hpp>
#include <tessera/memory/bytes.hpp>

namespace tessera {

namespace {
// What every Event made ready shares: nothing changes a ready state without a source, so one
// will do, and a device node that records no event (its successors follow it in stream order)
// allocates none. Never destroyed: Events may outlive static destruction.
const std::shared_ptr<detail::EventState>& ready_state() {
  static const auto* const state = new std::shared_ptr<detail::EventState>([] {
    auto s = std::make_shared<detail::EventState>();
    s->ready = true;
    return s;
  }());
  return *state;
}
}  // namespace

Event::Event() : state_(ready_state()) {}

bool Event::ready() const noexcept { return state_->is_ready(); }

void Event::synchronize() const { state_->wait(); }

Event Stream::record() {
  auto state = std::make_shared<detail::EventState>();
  state->source = this;
  record_into(state);
  return Event(std::move(state));
}

void Stream::make_ready(detail::EventState& state) { state.set(); }

void Stream::enqueue_host_timed(std::function<void()> work, std::string label,
                                std::function<void(std::chrono::nanoseconds)> took) {
  // The host's clock around the work: what a backend without a device clock of its own has.
  auto began = std::make_shared<std::chrono::steady_clock::time_point>();
  enqueue_host(
      [began, w = std::move(work)] {
        *began = std::chrono::steady_clock::now();
        w();
      },
      std::move(label));
  then([began, t = std::move(took)] { t(std::chrono::steady_clock::now() - *began); });
}

std::string Stream::capture_refusal(std::span<Stream* const> /*others*/) const {
  return "stream " + name_ + " runs work as it is enqueued and cannot record it";
}

std::unique_ptr<StreamCapture> Stream::begin_capture(std::span<Stream* const> others) {
  throw Error("cannot capture work on " + name_ + ": " + capture_refusal(others));
}

std::string StreamCapture::spoiled() const {
  std::lock_guard lock(spoiled_mutex_);
  if (is_spoiled_ && spoiled_.empty()) return "recorded work depends on state that a replay would not see";
  return spoiled_;
}

void StreamCapture::add_effect(std::shared_ptr<ReplayEffect> effect) {
  std::lock_guard lock(effects_mutex_);
  effects_.push_back(std::move(effect));
}

std::vector<std::shared_ptr<ReplayEffect>> StreamCapture::take_effects() {
  std::lock_guard lock(effects_mutex_);
  return std::move(effects_);
}

void StreamCapture::spoil(const std::string& why) noexcept {
  std::lock_guard lock(spoiled_mutex_);
  if (is_spoiled_) return;
  is_spoiled_ = true;
  try {
    spoiled_ = why;
  } catch (...) {  // no room for the reason: spoiled() gives a general one
  }
}

bool Stream::wait_ready(const Event& e) noexcept { return e.state_->is_ready(); }

Stream& Device::compute_stream(std::size_t i) {
  if (i >= compute_.size())
    throw Error("device " + name() + " has " + std::to_string(compute_.size()) + " compute streams; stream " +
                std::to_string(i) + " does not exist");
  return *compute_[i];
}

void Device::check_copy(bool dst_here, bool src_here, std::size_t bytes, CopyDirection direction,
                        const Stream& stream) const {
  if (&stream.device() != this)
    throw Error("copy on device " + name() + " was given stream " + stream.name() + " of another device");
  const bool ok = (direction == CopyDirection::host_to_device && dst_here && !src_here) ||
                  (direction == CopyDirection::device_to_host && src_here && !dst_here) ||
                  (direction == CopyDirection::device_to_device && (dst_here || src_here));
  if (!ok)
    throw Error("copy of " + format_bytes(bytes) + " on device " + name() + " (stream " + stream.name() +
                "): the pointers do not match the direction (destination " + (dst_here ? "is" : "is not") +
                " in this device's memory, source " + (src_here ? "is" : "is not") + ")");
}

void Device::synchronize() {
  for (auto& s : compute_) s->synchronize();
  for (auto& s : copy_) s->synchronize();
}

}  // namespace tessera
