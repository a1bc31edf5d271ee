#include "sim_capture.hpp"

#include "../event_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>

#include <algorithm>
#include <iterator>
#include <utility>

namespace tessera::detail {

// ---------------------------------------------------------------------------------------------
// Recording

SimCapture::SimCapture(std::vector<SimStream*> streams) : program_(std::make_shared<SimProgram>()) {
  program_->streams = std::move(streams);
  program_->ops.resize(program_->streams.size());
  program_->labels.emplace_back();
  std::size_t attached = 0;
  for (SimStream* s : program_->streams) {
    std::lock_guard lock(s->mutex_);
    if (s->capture_ != nullptr) {
      for (std::size_t k = 0; k < attached; ++k) {
        std::lock_guard undo(program_->streams[k]->mutex_);
        program_->streams[k]->set_capture(nullptr);
      }
      throw Error("cannot capture work on " + s->name() + ": another capture is recording it");
    }
    s->set_capture(this);
    ++attached;
  }
  attached_ = true;
}

SimCapture::~SimCapture() { detach(); }

void SimCapture::detach() noexcept {
  if (!attached_) return;
  for (SimStream* s : program_->streams) {
    std::lock_guard lock(s->mutex_);
    s->set_capture(nullptr);
  }
  attached_ = false;
}

std::size_t SimCapture::index_of(const SimStream& stream) const {
  const auto& streams = program_->streams;
  return static_cast<std::size_t>(std::find(streams.begin(), streams.end(), &stream) - streams.begin());
}

void SimCapture::label(std::string_view name) {
  std::lock_guard lock(mutex_);
  program_->labels.emplace_back(name);
}

void SimCapture::add_item(SimStream& stream, SimStream::Item item) {
  std::lock_guard lock(mutex_);
  SimOp op;
  op.item = std::move(item);
  op.label = program_->labels.size() - 1;
  program_->ops[index_of(stream)].push_back(std::move(op));
}

void SimCapture::add_record(SimStream& stream, std::shared_ptr<EventState> state) {
  std::lock_guard lock(mutex_);
  SimOp op;
  op.kind = SimOp::Kind::record;
  op.event = program_->events++;
  // The event recorded now stands for its place in every later launch; waits on it inside the
  // capture refer to that place. It is set here so that a stray host-side wait on it cannot hang.
  recorded_[state.get()] = op.event;
  state->set();
  program_->ops[index_of(stream)].push_back(std::move(op));
}

void SimCapture::add_wait(SimStream& stream, std::shared_ptr<EventState> state) {
  std::lock_guard lock(mutex_);
  SimOp op;
  if (auto it = recorded_.find(state.get()); it != recorded_.end()) {
    op.kind = SimOp::Kind::wait_recorded;
    op.event = it->second;
  } else {
    // Recorded before the capture (by a host node's copy, say): each replay must wait for what
    // that stream has done by then. An event made ready, or one of the waiting stream's own,
    // orders nothing more.
    Stream* source = state->source;
    if (source == nullptr || source == &stream) return;
    op.kind = SimOp::Kind::wait_outside;
    op.outside = source;
    auto& outside = program_->outside;
    if (std::find(outside.begin(), outside.end(), source) == outside.end()) outside.push_back(source);
  }
  program_->ops[index_of(stream)].push_back(std::move(op));
}

std::unique_ptr<CapturedWork> SimCapture::finish(std::unique_ptr<CapturedWork> /*previous*/) {
  // A recorded program holds its functions by value: there is nothing to update in place.
  detach();
  // What the recorded work waited for from outside is not all it depends on: the memory layer
  // skips an event that was already done when it asked, and a later run may enqueue that work
  // later. Each part therefore starts after everything enqueued before the launch on every
  // stream of the devices the recording touches (the executor enqueues what a part depends on
  // before launching it).
  std::vector<Stream*> all;
  for (SimStream* ps : program_->streams) {
    Device& d = ps->device();
    auto add = [&](Stream& st) {
      if (std::find(all.begin(), all.end(), &st) == all.end()) all.push_back(&st);
    };
    for (std::size_t i = 0; i < d.num_compute_streams(); ++i) add(d.compute_stream(i));
    add(d.copy_stream(CopyDirection::host_to_device));
    add(d.copy_stream(CopyDirection::device_to_host));
    add(d.copy_stream(CopyDirection::device_to_device));
  }
  for (Stream* st : all)
    if (std::find(program_->outside.begin(), program_->outside.end(), st) == program_->outside.end())
      program_->outside.push_back(st);
  for (std::size_t k = 0; k < program_->streams.size(); ++k) {
    std::vector<SimOp> prologue;
    for (Stream* st : program_->outside) {
      if (st == program_->streams[k]) continue;  // its own earlier work comes first anyway
      SimOp op;
      op.kind = SimOp::Kind::wait_outside;
      op.outside = st;
      prologue.push_back(std::move(op));
    }
    auto& ops = program_->ops[k];
    ops.insert(ops.begin(), std::make_move_iterator(prologue.begin()), std::make_move_iterator(prologue.end()));
  }
  return std::make_unique<SimCapturedWork>(std::move(program_));
}

// ---------------------------------------------------------------------------------------------
// Replay

struct SimCapturedWork::Launch {
  // One event per record, and one per stream for joining back into the first: fresh for each
  // launch, so no launch sees another's.
  std::vector<std::shared_ptr<EventState>> events;
  // The tail of each stream the recording waited on from outside, as of this launch.
  std::vector<Event> outside;
};

void SimCapturedWork::launch() {
  const SimProgram& p = *program_;
  auto run = std::make_shared<Launch>();
  run->events.reserve(p.events + p.streams.size());
  for (std::size_t i = 0; i < p.events + p.streams.size(); ++i) run->events.push_back(std::make_shared<EventState>());
  run->outside.reserve(p.outside.size());
  for (Stream* s : p.outside) run->outside.push_back(s->record());
  // The other streams first: the first stream's part ends by waiting for theirs.
  for (std::size_t k = p.streams.size(); k-- > 0;) {
    SimStream* s = p.streams[k];
    s->push(SimStream::Item{[this, k, run] { run_part(k, *run); }, {}, false, false, {}});
  }
}

void SimCapturedWork::run_part(std::size_t stream, const Launch& launch) {
  const SimProgram& p = *program_;
  const auto& events = launch.events;
  SimStream& s = *p.streams[stream];
  for (const SimOp& op : p.ops[stream]) {
    switch (op.kind) {
      case SimOp::Kind::run:
        if (std::exception_ptr failure = s.execute(op.item)) {
          std::lock_guard lock(error_mutex_);
          if (!error_) {
            error_ = failure;
            error_label_ = p.labels[op.label];
          }
        }
        break;
      case SimOp::Kind::record:
        events[op.event]->set();
        break;
      case SimOp::Kind::wait_recorded:
        events[op.event]->wait();
        break;
      case SimOp::Kind::wait_outside: {
        const auto at = std::find(p.outside.begin(), p.outside.end(), op.outside) - p.outside.begin();
        launch.outside[static_cast<std::size_t>(at)].synchronize();
        break;
      }
    }
  }
  const std::size_t joins = p.events;
  if (stream != 0) {
    events[joins + stream]->set();
  } else {
    for (std::size_t k = 1; k < p.streams.size(); ++k) events[joins + k]->wait();
  }
}

std::exception_ptr SimCapturedWork::take_error(std::string& label) noexcept {
  std::lock_guard lock(error_mutex_);
  if (error_) label.swap(error_label_);
  return std::exchange(error_, nullptr);
}

// ---------------------------------------------------------------------------------------------
// SimStream's part

std::string SimStream::capture_refusal(std::span<Stream* const> others) const {
  for (Stream* o : others)
    if (dynamic_cast<SimStream*>(o) == nullptr)
      return "stream " + o->name() + " is not a simulated device's, and " + name() + " is";
  return {};
}

std::unique_ptr<StreamCapture> SimStream::begin_capture(std::span<Stream* const> others) {
  if (std::string why = capture_refusal(others); !why.empty())
    throw Error("cannot capture work on " + name() + ": " + why);
  std::vector<SimStream*> streams{this};
  for (Stream* o : others)
    if (o != this && std::find(streams.begin(), streams.end(), o) == streams.end())
      streams.push_back(static_cast<SimStream*>(o));
  return std::make_unique<SimCapture>(std::move(streams));
}

void SimStream::note_replay_effect(FunctionRef<std::shared_ptr<ReplayEffect>()> make) {
  if (!capturing()) return;  // every Buffer access ends here: no lock when nothing records
  std::lock_guard lock(mutex_);
  if (capture_ != nullptr) capture_->add_effect(make());
}

void SimStream::spoil_capture(const std::string& why) noexcept {
  std::lock_guard lock(mutex_);
  if (capture_ != nullptr) capture_->spoil(why);
}

}  // namespace tessera::detail
