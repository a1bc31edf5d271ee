#pragma once
// Capture and replay on simulated devices: while a capture records, each participating stream's
// work, event records and waits go into a program instead of its queue; a launch hands each
// stream its part of the program as one queue item, with fresh events for the records, so one
// replay costs a push per stream rather than a push per piece of work.

#include "sim_stream.hpp"

#include <tessera/device/capture.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::detail {

struct EventState;

/// One recorded step of one stream.
struct SimOp {
  enum class Kind : std::uint8_t { run, record, wait_recorded, wait_outside };
  Kind kind = Kind::run;
  SimStream::Item item;       // run
  std::size_t event = 0;      // record, wait_recorded: index into the launch's events
  Stream* outside = nullptr;  // wait_outside: the stream an event from before the
                              // capture was recorded on; a replay waits for its tail
  std::size_t label = 0;      // run: index into SimProgram::labels
};

struct SimProgram {
  std::vector<SimStream*> streams;      // [0] is where the capture began
  std::vector<std::vector<SimOp>> ops;  // per stream
  std::vector<std::string> labels;
  std::size_t events = 0;
  std::vector<Stream*> outside;  // distinct streams of wait_outside ops
};

class SimCapturedWork final : public CapturedWork {
 public:
  explicit SimCapturedWork(std::shared_ptr<const SimProgram> program) : program_(std::move(program)) {}
  void launch() override;
  std::exception_ptr take_error(std::string& label) noexcept override;

 private:
  struct Launch;
  void run_part(std::size_t stream, const Launch& launch);
  std::shared_ptr<const SimProgram> program_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::string error_label_;
};

class SimCapture final : public StreamCapture {
 public:
  /// Starts recording on `streams` ([0] the origin). Throws tessera::Error when one of them is
  /// recording for another capture already.
  explicit SimCapture(std::vector<SimStream*> streams);
  ~SimCapture() override;  // unfinished: the streams run work again, the recording is dropped

  void label(std::string_view name) override;
  std::unique_ptr<CapturedWork> finish(std::unique_ptr<CapturedWork> previous) override;

  // Called by a participating stream under its queue lock.
  void add_item(SimStream& stream, SimStream::Item item);
  void add_record(SimStream& stream, std::shared_ptr<EventState> state);
  void add_wait(SimStream& stream, std::shared_ptr<EventState> state);

 private:
  std::size_t index_of(const SimStream& stream) const;
  void detach() noexcept;

  std::mutex mutex_;  // streams may record from several threads
  std::shared_ptr<SimProgram> program_;
  std::unordered_map<const EventState*, std::size_t> recorded_;
  bool attached_ = false;
};

}  // namespace tessera::detail
