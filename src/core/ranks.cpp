#include <tessera/core/ranks.hpp>
#include <tessera/sched/progress.hpp>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>

namespace tessera {

namespace {

// Counts completions of a group of messages and keeps the first error; `last` runs when the
// final one completes.
struct MessageGroup {
  explicit MessageGroup(std::size_t n, Ranks::Done last) : remaining(n), on_last(std::move(last)) {}
  std::atomic<std::size_t> remaining;
  std::mutex mutex;
  std::exception_ptr error;
  Ranks::Done on_last;

  Ranks::Done completion(const std::shared_ptr<MessageGroup>& self) {
    return [self](std::exception_ptr e) {
      if (e) {
        std::lock_guard lock(self->mutex);
        if (!self->error) self->error = e;
      }
      if (self->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::exception_ptr first;
        {
          std::lock_guard lock(self->mutex);
          first = self->error;
        }
        self->on_last(first);
      }
    };
  }
};

}  // namespace

void wait_for_messages(std::size_t count, const std::function<void(Ranks::Done, std::size_t)>& post) {
  if (count == 0) return;
  struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr error;
  };
  auto waiter = std::make_shared<Waiter>();
  auto group = std::make_shared<MessageGroup>(count, [waiter](std::exception_ptr e) {
    std::lock_guard lock(waiter->mutex);
    waiter->error = e;
    waiter->done = true;
    waiter->cv.notify_all();
  });
  std::size_t posted = 0;
  std::exception_ptr post_error;
  try {
    for (; posted < count; ++posted) post(group->completion(group), posted);
  } catch (...) {
    post_error = std::current_exception();
  }
  // Messages already started must finish before their memory goes away; the ones never posted
  // are completed here so the group ends.
  for (std::size_t k = posted; k < count; ++k) group->completion(group)(nullptr);
  {
    // A worker blocked here (a graph node loading a distributed tensor's halo) polls nothing.
    BlockedWorker blocked;
    std::unique_lock lock(waiter->mutex);
    waiter->cv.wait(lock, [&] { return waiter->done; });
  }
  if (post_error) std::rethrow_exception(post_error);
  if (waiter->error) std::rethrow_exception(waiter->error);
}

void post_all_gather(Ranks& ranks, std::uint64_t channel, const void* mine, std::size_t bytes, void* all,
                     Ranks::Done done) {
  const int n = ranks.size(), me = ranks.rank();
  auto* out = static_cast<std::byte*>(all);
  if (bytes > 0) std::memmove(out + static_cast<std::size_t>(me) * bytes, mine, bytes);
  if (n == 1) {
    done(nullptr);
    return;
  }
  auto group = std::make_shared<MessageGroup>(2 * static_cast<std::size_t>(n - 1), std::move(done));
  for (int k = 0; k < n; ++k) {
    if (k == me) continue;
    ranks.post_recv(out + static_cast<std::size_t>(k) * bytes, bytes, k, channel, group->completion(group));
    ranks.post_send(mine, bytes, k, channel, group->completion(group));
  }
}

void all_gather(Ranks& ranks, std::uint64_t channel, const void* mine, std::size_t bytes, void* all) {
  wait_for_messages(1, [&](Ranks::Done done, std::size_t) { post_all_gather(ranks, channel, mine, bytes, all, done); });
}

}  // namespace tessera
