#pragma once
// Capture and replay: device work enqueued once on a set of streams, recorded instead of run,
// and then launched again as a whole (CUDA: a stream capture instantiated as a CUDA graph; sim:
// a recorded program of each stream's work). The executor captures a NodeGraph's device part
// this way (NodeGraph::capture); code that drives streams itself may use it directly.
//
//   std::unique_ptr<tessera::StreamCapture> capture = stream.begin_capture({});
//   enqueue_step(stream);                          // recorded, not run
//   std::unique_ptr<tessera::CapturedWork> step = capture->finish(nullptr);
//   for (int i = 0; i < 100; ++i) step->launch();  // each launch runs the recorded work once
//   stream.synchronize();

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

class Stream;

/// Work recorded by a StreamCapture, launched as a whole on the stream the capture began on.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  /// Enqueues one run of the recorded work on the capture's first stream: it starts after the
  /// work enqueued there before, and work enqueued there later starts after all of it (on every
  /// stream it spans). Launches of one CapturedWork run one after another.
  virtual void launch() = 0;
  /// The first failure of recorded work since the last call, or null; `label` is set to the
  /// label the work was recorded under (StreamCapture::label). Backends whose work cannot fail
  /// on the host (CUDA) report nothing here; their errors reach the next checked call. Must
  /// outlive its launches.
  virtual std::exception_ptr take_error(std::string& /*label*/) noexcept { return nullptr; }
};

/// A check of whether a recording may be replayed, made effect by effect in recording order.
/// An effect may depend on the ones recorded before it (rows a recorded kernel writes, or a
/// recorded copy brings, before recorded work reads them need not be anywhere yet), so each
/// owner of effects (a buffer of the memory layer) keeps here what the effects checked so far
/// will have done when the replay runs. Opaque to the device layer.
class ReplayCheck {
 public:
  /// `owner`'s scratch state for this check, made by `make()` when first asked for.
  template <class T, class Make>
  T& scratch(const void* owner, Make&& make) {
    for (auto& [who, state] : scratch_)
      if (who == owner) return *static_cast<T*>(state.get());
    auto state = std::make_shared<T>(make());
    T& ref = *state;
    scratch_.emplace_back(owner, std::move(state));
    return ref;
  }

 private:
  std::vector<std::pair<const void*, std::shared_ptr<void>>> scratch_;
};

/// What recorded work did besides the work itself: the memory layer's bookkeeping of a buffer
/// access or of a copy (which replica is valid, what later work must wait for), redone after
/// every replay, and the condition for replaying it at all (the data it read is still where it
/// read it). Without it a replay would leave that bookkeeping as the recording run left it, and
/// whatever read the data next elsewhere (the host, another device) would read what the
/// recording wrote.
class ReplayEffect {
 public:
  virtual ~ReplayEffect() = default;
  /// Whether the recording may be replayed now, given the effects recorded before this one
  /// (asked in recording order with one `check`); false: record it again.
  virtual bool ready(ReplayCheck& check) const = 0;
  /// After a replay was enqueued on `origin` (the capture's first stream, which later work
  /// follows on every stream the capture spans).
  virtual void replayed(Stream& origin) = 0;
};

/// A capture in progress (Stream::begin_capture). Work enqueued on its streams is recorded, not
/// run, until finish(); events recorded on them order the recorded work across its streams.
/// Destroying it unfinished discards what was recorded, and the streams run work again.
class StreamCapture {
 public:
  virtual ~StreamCapture() = default;
  /// Names the work recorded from now on, for errors raised when it runs.
  virtual void label(std::string_view name) = 0;
  /// Ends the capture. Where `previous` came from a capture of the same shape (same work on the
  /// same streams, only arguments changed), the backend updates it in place rather than building
  /// anew (CUDA: cudaGraphExecUpdate) and returns it. Throws tessera::Error naming what could not
  /// be captured.
  virtual std::unique_ptr<CapturedWork> finish(std::unique_ptr<CapturedWork> previous) = 0;
  /// Why the recording must not be replayed (Stream::spoil_capture), or empty. A spoiled
  /// recording is still right for one launch: the run it was made in.
  std::string spoiled() const;
  /// Called through Stream::spoil_capture by the capture's streams; keeps the first reason.
  void spoil(const std::string& why) noexcept;
  /// Called through Stream::note_replay_effect by the capture's streams.
  void add_effect(std::shared_ptr<ReplayEffect> effect);
  /// What the recording did besides its work (ReplayEffect), in the order it was done.
  std::vector<std::shared_ptr<ReplayEffect>> take_effects();

 private:
  mutable std::mutex spoiled_mutex_;
  bool is_spoiled_ = false;
  std::string spoiled_;
  std::mutex effects_mutex_;
  std::vector<std::shared_ptr<ReplayEffect>> effects_;
};

}  // namespace tessera
