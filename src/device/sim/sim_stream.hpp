#pragma once
// A stream of a simulated device: one thread that runs its queue in order.

#include <tessera/device/stream.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::detail {

class SimStream final : public Stream {
public:
  SimStream(Device* device, StreamRole role, std::string name);
  ~SimStream() override;  // runs what is queued, then stops

  void enqueue_host(std::function<void()> work) override;
  void wait(const Event& e) override;
  void then(std::function<void()> callback) override;

private:
  void record_into(std::shared_ptr<EventState> state) override;
  void run();

  std::mutex mutex_;
  std::condition_variable has_work_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::detail
