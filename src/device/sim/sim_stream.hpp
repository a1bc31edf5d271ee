#pragma once
// A stream of a simulated device: one thread that runs its queue in order. While an executor
// records a trace, the stream times each piece of work into a track of its own.

#include "../../core/trace_sources.hpp"

#include <tessera/device/stream.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::detail {

class SimStream final : public Stream, public TraceSource {
public:
  SimStream(Device* device, StreamRole role, std::string name);
  ~SimStream() override;  // runs what is queued, then stops

  void enqueue_host(std::function<void()> work, std::string label = "work") override;
  void wait(const Event& e) override;
  void then(std::function<void()> callback) override;

  std::string track_name() const override { return name(); }
  void drain(std::vector<TraceEvent>& out) override;

private:
  struct Item {
    std::function<void()> work;
    std::string label;
  };

  void record_into(std::shared_ptr<EventState> state) override;
  void run();

  std::mutex mutex_;
  std::condition_variable has_work_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::mutex trace_mutex_;
  std::vector<TraceEvent> trace_events_;
  std::thread thread_;
};

}  // namespace tessera::detail
