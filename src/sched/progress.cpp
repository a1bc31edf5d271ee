#include "progress_sources.hpp"

#include <tessera/sched/progress.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace tessera {
namespace {

// Pollers take the lock shared, so workers poll together; ending a registration takes it
// exclusively, which is what makes reset() wait for polls in progress.
struct Registry {
  std::shared_mutex mutex;
  std::vector<std::pair<std::uint64_t, ProgressSource*>> sources;
  std::uint64_t next_id = 1;
  std::atomic<std::size_t> count{0};
  std::atomic<int> attending{0};
};

Registry& registry() {
  // Never destroyed: workers of an executor that outlives main() (a static one) still count
  // themselves out after static destruction has begun.
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

ProgressRegistration register_progress_source(ProgressSource& source) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  const std::uint64_t id = r.next_id++;
  r.sources.emplace_back(id, &source);
  r.count.store(r.sources.size(), std::memory_order_release);
  return ProgressRegistration(id);
}

ProgressRegistration& ProgressRegistration::operator=(ProgressRegistration&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void ProgressRegistration::reset() noexcept {
  if (id_ == 0) return;
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  std::erase_if(r.sources, [this](const auto& s) { return s.first == id_; });
  r.count.store(r.sources.size(), std::memory_order_release);
  id_ = 0;
}

int attending_workers() noexcept { return registry().attending.load(std::memory_order_acquire); }

namespace detail {

bool progress_sources_registered() noexcept { return registry().count.load(std::memory_order_relaxed) != 0; }

void worker_attends() noexcept { registry().attending.fetch_add(1, std::memory_order_acq_rel); }

void worker_leaves() noexcept {
  auto& r = registry();
  if (r.attending.fetch_sub(1, std::memory_order_acq_rel) != 1 || r.count.load(std::memory_order_acquire) == 0) return;
  // The last awake worker: tell the sources that nobody polls them now. Blocking on a
  // registration in progress is fine here: the worker is about to sleep anyway.
  std::shared_lock lock(r.mutex);
  for (auto& [id, source] : r.sources) source->unattended();
}

bool poll_progress_sources() noexcept {
  auto& r = registry();
  if (r.count.load(std::memory_order_acquire) == 0) return false;
  // try: a registration being added or ended is rare and brief, and an idle worker has better
  // things to do than queue behind it.
  std::shared_lock lock(r.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool progressed = false;
  for (auto& [id, source] : r.sources) progressed = source->poll() || progressed;
  return progressed;
}

}  // namespace detail
}  // namespace tessera
