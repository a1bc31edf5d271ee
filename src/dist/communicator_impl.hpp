#pragma once
// The communicator's private side: MPI handles, the request states and the progress engine.
// Every MPI call of tessera goes through `mpi_mutex`, so MPI_THREAD_SERIALIZED is all tessera
// needs; the program may ask for more for its own calls.

#include "request_pool.hpp"

#include <tessera/dist/communicator.hpp>
#include <tessera/sched/progress.hpp>

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera::dist::detail {

struct RequestState : std::enable_shared_from_this<RequestState> {
  // User-provided, so that making one sets each member once instead of first zeroing all of it
  // (a `rep stos` that was a tenth of a small message's cost).
  RequestState() noexcept {}
  MPI_Request request = MPI_REQUEST_NULL;
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::size_t bytes = 0;  // what a receive got
  std::size_t size = 0;   // what was posted
  bool is_receive = false;
  // Not yet handed to the progress engine: whoever waits tests it directly (no lists, no other
  // thread), which is what makes a small message cost about what MPI_Send/MPI_Recv cost.
  // Handed over when a wait outlasts its spin, or when its last Request goes away.
  std::atomic<bool> tracked{false};
  // Named in errors, built only then: "send of 64 B to rank 1 (tag 7)", or `label` when set.
  const char* op = "operation";
  int peer = -1;
  int tag = 0;
  std::string label;
  std::string what() const;
  std::mutex mutex;
  std::condition_variable cv;
  std::function<void(RequestState&)> on_complete;
  CommunicatorImpl* owner = nullptr;

  /// Back to a fresh state's values, for reuse once nothing else holds it (the mutex and the
  /// condition variable have no waiters then).
  void reset() noexcept {
    request = MPI_REQUEST_NULL;
    done.store(false, std::memory_order_relaxed);
    error = nullptr;
    bytes = 0;
    size = 0;
    is_receive = false;
    tracked.store(false, std::memory_order_relaxed);
    op = "operation";
    peer = -1;
    tag = 0;
    if (!label.empty()) label.clear();
    if (on_complete) on_complete = nullptr;
    owner = nullptr;
  }
};

#if defined(__SANITIZE_THREAD__)
inline constexpr bool thread_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool thread_sanitizer = true;
#else
inline constexpr bool thread_sanitizer = false;
#endif
#else
inline constexpr bool thread_sanitizer = false;
#endif

/// Set once this thread's recent states are gone (thread exit; on the main thread, before static
/// objects that may still make requests are destroyed). Trivially destructible, so it can be read
/// after that.
inline bool& recent_states_closed() noexcept {
  thread_local bool closed = false;
  return closed;
}

/// The last few states this thread made (make_request_state).
struct RecentStates {
  static constexpr unsigned kept = 8;
  std::shared_ptr<RequestState> slots[kept];
  unsigned next = 0;
  ~RecentStates() { recent_states_closed() = true; }
};

/// A fresh request state. Each thread keeps the last few it made and hands one out again, reset,
/// once nothing else holds it: making and destroying a state (its mutex, condition variable,
/// function and string) was 17 ns, 5-8 % of a small message's one-way trip. Otherwise a new
/// one, its block recycled from this thread's cache when there is one.
inline std::shared_ptr<RequestState> make_request_state() {
  // ThreadSanitizer does not model a standalone fence, so it would take the hand-over below (a
  // relaxed use_count() read, then an acquire fence, against the other owner's release) for a
  // race: under it every state is a new one.
  constexpr bool hand_states_on = !thread_sanitizer;
  if (hand_states_on && !recent_states_closed()) {
    thread_local RecentStates recent;
    for (unsigned k = 0; k < RecentStates::kept; ++k) {
      auto& slot = recent.slots[(recent.next + k) % RecentStates::kept];
      if (slot && slot.use_count() != 1) continue;
      recent.next = (recent.next + k + 1) % RecentStates::kept;
      if (!slot) {
        slot = std::allocate_shared<RequestState>(RecyclingAllocator<RequestState>{});
      } else {
        // The last other owner let go with a release; this fence makes what it wrote visible.
        std::atomic_thread_fence(std::memory_order_acquire);
        slot->reset();
      }
      return slot;
    }
  }
  return std::allocate_shared<RequestState>(RecyclingAllocator<RequestState>{});
}

/// Turns an MPI error code into a tessera::Error naming the call.
[[noreturn]] void throw_mpi_error(int code, const std::string& what);
inline void check_mpi(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, what);
}
inline void check_mpi(int code, const RequestState& state) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, state.what());
}

// A ProgressSource: executor workers poll it (poll_once) between tasks and while a graph waits on
// a message, so the node a message releases runs as soon as it lands, on a worker, and the
// progress thread backs them up at max_sleep until the last one falls asleep.
class CommunicatorImpl final : public ProgressSource {
 public:
  CommunicatorImpl(int* argc, char*** argv, CommunicatorOptions options);
  ~CommunicatorImpl();

  int rank = 0;
  int size = 1;
  int node_size = 1;
  bool cuda_aware = false;
  MPI_Comm comm = MPI_COMM_NULL;
  std::mutex mpi_mutex;

  /// Hands a started MPI request to the progress engine.
  Request track(std::shared_ptr<RequestState> state);
  /// Tests an untracked request once, completing it when MPI has. Returns whether it is done.
  bool test_untracked(RequestState& state);
  /// Starts a send/receive and tracks it. `on_complete` runs once, on completion or failure.
  Request start_send(const void* data, std::size_t bytes, int dest, int tag,
                     std::function<void(RequestState&)> on_complete = {}, MPI_Comm on = MPI_COMM_NULL);
  Request start_recv(void* data, std::size_t capacity, int source, int tag,
                     std::function<void(RequestState&)> on_complete = {});

  /// A poller runs on every progress step (the mobile-object layer's message probe). It returns
  /// whether it did something, which restarts the spin window. Remove before destruction.
  using Poller = std::function<bool()>;
  std::size_t add_poller(Poller p);
  void remove_poller(std::size_t id);

  /// One progress step, unless another thread is taking one: tests the tracked requests and runs
  /// the pollers. Returns whether anything completed or happened.
  bool poll_once();
  bool poll() noexcept override;
  void unattended() noexcept override;
  /// Wakes the progress thread out of its sleep (new work for it).
  void wake();
  /// Blocks on `state` the way Request::wait does.
  void wait(RequestState& state);

  std::chrono::microseconds spin;
  std::chrono::microseconds max_sleep;

 private:
  void progress_loop();
  // `waited_on`: a thread may sleep on the request's condition variable (only once tracked).
  void complete(RequestState& state, int mpi_error, bool waited_on = true);

  std::mutex list_mutex_;
  std::vector<std::shared_ptr<RequestState>> incoming_;
  std::vector<std::pair<std::size_t, Poller>> pollers_;
  std::size_t next_poller_ = 0;
  bool pollers_changed_ = false;

  std::vector<std::shared_ptr<RequestState>> handed_over_;  // guarded by mpi_mutex
  std::mutex poll_mutex_;                                   // one progress step at a time
  std::vector<std::shared_ptr<RequestState>> active_;
  std::vector<MPI_Request> active_requests_;
  // The posted sizes of the tracked requests not yet complete, as of the last progress step: a
  // large transfer moves only while MPI is called (see progress_loop).
  std::atomic<std::size_t> streaming_bytes_{0};
  std::vector<Poller> poller_snapshot_;

  std::mutex sleep_mutex_;
  std::condition_variable sleep_cv_;
  bool woken_ = false;
  // Threads polling in wait(): while there are any, the progress thread need not poll itself
  // (two pollers per rank would share the cores with the other ranks' for nothing).
  std::atomic<int> polling_waiters_{0};
  // What every small send that completed when posted returns: one complete state for the whole
  // process, never destroyed, which its Requests point to without owning it (an aliasing
  // shared_ptr with no owner), so that no count is touched. Request's members answer a complete
  // state without asking its owner.
  static const std::shared_ptr<RequestState>& sent_request_state();
  std::atomic<bool> progress_asleep_{false};  // in its untimed wait: only then does wake() notify
  bool stop_ = false;
  std::thread progress_;
  ProgressRegistration polled_by_workers_;
};

}  // namespace tessera::dist::detail
