// The three scheduling policies: FIFO, locality-aware, and data-affine with work estimates.
#include <tessera/task/scheduler.hpp>

#include <deque>
#include <limits>
#include <mutex>
#include <vector>

namespace tessera {

namespace {

class FifoScheduler final : public Scheduler {
public:
  std::size_t push(ScheduledTask t) override {
    std::lock_guard lock(mutex_);
    queue_.push_back(t);
    return any_device;
  }
  ScheduledTask pop(std::size_t) override {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return {};
    ScheduledTask t = queue_.front();
    queue_.pop_front();
    return t;
  }

private:
  std::mutex mutex_;
  std::deque<ScheduledTask> queue_;
};

/// A queue per device and the work waiting on each (queued or running): the base of the two
/// placing policies, which differ only in how they choose.
class PlacingScheduler : public Scheduler {
public:
  void attach(std::size_t n) override {
    queues_.assign(n, {});
    backlog_.assign(n, 0);
  }
  std::size_t push(ScheduledTask t) override {
    // Ask the buffers before taking the lock: valid_rows takes each buffer's own lock.
    std::vector<std::size_t> resident(queues_.size());
    for (std::size_t d = 0; d < queues_.size(); ++d) resident[d] = t.resident_input_bytes(d);
    const std::size_t input = t.input_bytes();
    std::lock_guard lock(mutex_);
    const std::size_t d = choose(t, resident, input);
    queues_[d].push_back(t);
    backlog_[d] += cost(t);
    return d;
  }
  ScheduledTask pop(std::size_t device) override {
    std::lock_guard lock(mutex_);
    auto& q = queues_[device];
    if (q.empty()) return {};
    ScheduledTask t = q.front();
    q.pop_front();
    return t;
  }
  void finished(const ScheduledTask& t, std::size_t device) override {
    std::lock_guard lock(mutex_);
    backlog_[device] -= cost(t);
  }

protected:
  /// Expected wait in ns; a task without an estimate counts 1 ns, so that with no estimates at
  /// all the backlog is the number of tasks queued or running.
  static double cost(const ScheduledTask& t) {
    return t.estimate().count() > 0 ? static_cast<double>(t.estimate().count()) : 1.0;
  }
  virtual std::size_t choose(const ScheduledTask& t, const std::vector<std::size_t>& resident, std::size_t input) = 0;

  std::mutex mutex_;
  std::vector<std::deque<ScheduledTask>> queues_;
  std::vector<double> backlog_;
};

class LocalityScheduler final : public PlacingScheduler {
  std::size_t choose(const ScheduledTask&, const std::vector<std::size_t>& resident, std::size_t) override {
    std::size_t best = 0;
    for (std::size_t d = 1; d < resident.size(); ++d)
      if (resident[d] > resident[best] || (resident[d] == resident[best] && backlog_[d] < backlog_[best])) best = d;
    return best;
  }
};

class DataAffineScheduler final : public PlacingScheduler {
public:
  explicit DataAffineScheduler(double bytes_per_second) : ns_per_byte_(bytes_per_second > 0 ? 1e9 / bytes_per_second : 0) {}

private:
  std::size_t choose(const ScheduledTask& t, const std::vector<std::size_t>& resident, std::size_t input) override {
    std::size_t best = 0;
    double best_finish = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < resident.size(); ++d) {
      const double copy_ns = static_cast<double>(input - resident[d]) * ns_per_byte_;
      const double finish = backlog_[d] + copy_ns + cost(t);
      if (finish < best_finish) {
        best_finish = finish;
        best = d;
      }
    }
    return best;
  }
  double ns_per_byte_;
};

}  // namespace

std::shared_ptr<Scheduler> fifo_scheduler() { return std::make_shared<FifoScheduler>(); }
std::shared_ptr<Scheduler> locality_scheduler() { return std::make_shared<LocalityScheduler>(); }
std::shared_ptr<Scheduler> data_affine_scheduler(double bytes_per_second) {
  return std::make_shared<DataAffineScheduler>(bytes_per_second);
}

}  // namespace tessera
