#include "communicator_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/sched/node_graph.hpp>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

namespace tessera::dist {
namespace detail {
namespace {

// Sends up to this size complete when posted: OpenMPI's shared-memory transport copies up to
// 256 B into its queue at once (btl_vader_max_inline_send), and its network ones send such a
// message eagerly. A send that has not completed simply keeps a state of its own.
constexpr std::size_t inline_send_bytes = 256;

/// A message's bytes as MPI counts them. Counts are ints: more than 2^31-1 bytes go as one
/// element of a type made of 1 GiB pieces and the rest, which the receiver may describe
/// differently (MPI matches messages byte for byte). Made and freed under mpi_mutex; freeing it
/// while a send or receive that uses it is pending is allowed.
class BytesAsType {
 public:
  explicit BytesAsType(std::size_t bytes) {
    if (bytes <= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      count_ = static_cast<int>(bytes);
      return;
    }
    constexpr std::size_t piece = std::size_t{1} << 30;
    MPI_Datatype pieces;
    MPI_Type_contiguous(static_cast<int>(piece), MPI_BYTE, &pieces);
    const int lengths[2] = {static_cast<int>(bytes / piece), static_cast<int>(bytes % piece)};
    const MPI_Aint offsets[2] = {0, static_cast<MPI_Aint>(bytes / piece * piece)};
    const MPI_Datatype types[2] = {pieces, MPI_BYTE};
    MPI_Type_create_struct(2, lengths, offsets, types, &type_);
    MPI_Type_commit(&type_);
    MPI_Type_free(&pieces);
    count_ = 1;
  }
  ~BytesAsType() {
    if (type_ != MPI_BYTE) MPI_Type_free(&type_);
  }
  BytesAsType(const BytesAsType&) = delete;
  BytesAsType& operator=(const BytesAsType&) = delete;
  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
};

/// The bytes a completed receive of at most `posted` bytes brought. Posted as MPI_BYTE (an int's
/// worth), MPI_Get_count says; MPI_Get_elements_x, for the larger types of BytesAsType, walks
/// the datatype and cost 27 ns on an 8-byte message's path (a tenth of its one-way trip here).
std::size_t received_bytes(const MPI_Status& status, std::size_t posted) {
  if (posted <= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    return count == MPI_UNDEFINED ? 0 : static_cast<std::size_t>(count);
  }
  MPI_Count bytes = 0;
  MPI_Get_elements_x(&status, MPI_BYTE, &bytes);
  return bytes == MPI_UNDEFINED ? 0 : static_cast<std::size_t>(bytes);
}

std::mutex g_mpi_life_mutex;
int g_communicators = 0;
bool g_tessera_initialised_mpi = false;

std::chrono::microseconds env_microseconds(const char* name, std::chrono::microseconds fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v < 0)
    throw Error(std::string(name) + " must be a non-negative number of microseconds, got '" + text + "'");
  return std::chrono::microseconds(v);
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

std::string RequestState::what() const {
  if (!label.empty()) return label;
  const bool sending = std::string_view(op) == "send";
  return std::string(op) + " of " + std::to_string(size) + " B " + (sending ? "to" : "from") + " " +
         (peer == MPI_ANY_SOURCE ? std::string("any rank") : "rank " + std::to_string(peer)) + " (tag " +
         std::to_string(tag) + ")";
}

void throw_mpi_error(int code, const std::string& what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error("MPI failed in " + what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

CommunicatorImpl::CommunicatorImpl(int* argc, char*** argv, CommunicatorOptions options)
    : spin(env_microseconds("TESSERA_DIST_SPIN_US", options.spin)),
      max_sleep(env_microseconds("TESSERA_DIST_SLEEP_US", options.max_sleep)) {
  if (max_sleep.count() < 1) max_sleep = std::chrono::microseconds(1);
  {
    std::lock_guard life(g_mpi_life_mutex);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      throw Error("tessera::dist::Communicator: MPI was already finalised; it cannot be used again in this process");
    int initialised = 0;
    MPI_Initialized(&initialised);
    int provided = MPI_THREAD_SINGLE;
    if (!initialised) {
      check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      g_tessera_initialised_mpi = true;
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED)
      throw Error(std::string("tessera::dist::Communicator: MPI runs at ") + thread_level_name(provided) +
                  ", and tessera's progress thread needs at least MPI_THREAD_SERIALIZED: initialise MPI with "
                  "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or let tessera initialise it");
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
    ++g_communicators;
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
  }
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  cuda_aware = MPIX_Query_cuda_support() == 1;
#endif
  progress_ = std::thread([this] { progress_loop(); });
  polled_by_workers_ = register_progress_source(*this);
}

CommunicatorImpl::~CommunicatorImpl() {
  polled_by_workers_.reset();  // no worker polls from here on
  // Sends finish on their own once matched; receives that nothing will match are cancelled, so a
  // program that posted one too many never hangs here.
  {
    std::lock_guard lock(poll_mutex_);
    std::lock_guard list(list_mutex_);
    std::lock_guard mpi(mpi_mutex);
    for (auto* group : {&active_, &incoming_, &handed_over_})
      for (auto& s : *group)
        if (s->is_receive && !s->done.load()) MPI_Cancel(&s->request);
  }
  for (;;) {
    poll_once();
    std::lock_guard lock(poll_mutex_);
    std::lock_guard list(list_mutex_);
    std::lock_guard mpi(mpi_mutex);
    if (active_.empty() && incoming_.empty() && handed_over_.empty()) break;
  }
  {
    std::lock_guard lock(sleep_mutex_);
    stop_ = true;
  }
  sleep_cv_.notify_all();
  progress_.join();
  std::lock_guard life(g_mpi_life_mutex);
  MPI_Comm_free(&comm);
  if (--g_communicators == 0 && g_tessera_initialised_mpi) {
    MPI_Finalize();
    g_tessera_initialised_mpi = false;
  }
}

Request CommunicatorImpl::track(std::shared_ptr<RequestState> state) {
  state->owner = this;
  state->tracked.store(true, std::memory_order_release);
  {
    std::lock_guard list(list_mutex_);
    incoming_.push_back(state);
  }
  wake();
  return Request(std::move(state));
}

const std::shared_ptr<RequestState>& CommunicatorImpl::sent_request_state() {
  // Made once and handed out by reference: a pointer built afresh and returned by value was read
  // back by its caller as one 16-byte load of two 8-byte stores just made, which waits for them
  // to reach the cache (half of a small send's own time, in a profile).
  static const std::shared_ptr<RequestState>* const sent =
      new std::shared_ptr<RequestState>(std::shared_ptr<void>(), [] {
        auto* s = new RequestState();
        s->op = "send";
        s->tracked.store(true, std::memory_order_relaxed);
        s->done.store(true, std::memory_order_relaxed);
        return s;
      }());
  return *sent;
}

Request CommunicatorImpl::start_send(const void* data, std::size_t bytes, int dest, int tag,
                                     std::function<void(RequestState&)> on_complete, MPI_Comm on) {
  MPI_Comm to = on == MPI_COMM_NULL ? comm : on;
  // A small send nobody chained work to is complete as soon as it is posted (MPI copies it into
  // the transport's queue), so it is tested at once, under the same hold of the lock, and then
  // returns the one shared completed state instead of a state of its own: 5-10 % of an 8 B
  // one-way trip, measured alternating both ways in one process.
  const bool small = !on_complete && bytes <= inline_send_bytes && dest >= 0 && dest < size;
  MPI_Request posted = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  if (small) {
    int flag = 0;
    {
      std::lock_guard mpi(mpi_mutex);
      rc = MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, to, &posted);
      if (rc == MPI_SUCCESS) rc = MPI_Test(&posted, &flag, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS && flag) return Request(sent_request_state());
  }
  auto state = make_request_state();
  state->op = "send";
  state->peer = dest;
  state->tag = tag;
  state->size = bytes;
  if (dest < 0 || dest >= size)
    throw Error("tessera::dist: " + state->what() + ": there are ranks 0 to " + std::to_string(size - 1));
  state->on_complete = std::move(on_complete);
  if (small) {
    check_mpi(rc, *state);
    state->request = posted;  // posted, not done yet
  } else {
    std::lock_guard mpi(mpi_mutex);
    const BytesAsType message(bytes);
    check_mpi(MPI_Isend(data, message.count(), message.type(), dest, tag, to, &state->request), *state);
  }
  if (state->on_complete) return track(std::move(state));
  state->owner = this;
  return Request(std::move(state));
}

Request CommunicatorImpl::start_recv(void* data, std::size_t capacity, int source, int tag,
                                     std::function<void(RequestState&)> on_complete) {
  auto state = make_request_state();
  state->is_receive = true;
  state->op = "receive";
  state->peer = source;
  state->tag = tag;
  state->size = capacity;
  if (source != MPI_ANY_SOURCE && (source < 0 || source >= size))
    throw Error("tessera::dist: " + state->what() + ": there are ranks 0 to " + std::to_string(size - 1));
  state->on_complete = std::move(on_complete);
  {
    std::lock_guard mpi(mpi_mutex);
    const BytesAsType message(capacity);
    check_mpi(MPI_Irecv(data, message.count(), message.type(), source, tag, comm, &state->request), *state);
  }
  if (state->on_complete) return track(std::move(state));
  state->owner = this;
  return Request(std::move(state));
}

std::size_t CommunicatorImpl::add_poller(Poller p) {
  std::size_t id;
  {
    std::lock_guard list(list_mutex_);
    id = next_poller_++;
    pollers_.emplace_back(id, std::move(p));
    pollers_changed_ = true;
  }
  wake();
  return id;
}

void CommunicatorImpl::remove_poller(std::size_t id) {
  // Taking the poll lock first makes sure the poller is not running when this returns.
  std::lock_guard lock(poll_mutex_);
  std::lock_guard list(list_mutex_);
  std::erase_if(pollers_, [id](const auto& p) { return p.first == id; });
  pollers_changed_ = true;
}

void CommunicatorImpl::complete(RequestState& state, int mpi_error, bool waited_on) {
  if (mpi_error != MPI_SUCCESS) {
    try {
      throw_mpi_error(mpi_error, state.what());
    } catch (...) {
      state.error = std::current_exception();
    }
  }
  if (state.on_complete) {
    try {
      state.on_complete(state);
    } catch (...) {
      if (!state.error) state.error = std::current_exception();
    }
  }
  if (!waited_on) {
    state.done.store(true, std::memory_order_release);
    return;
  }
  {
    std::lock_guard lock(state.mutex);
    state.done.store(true, std::memory_order_release);
  }
  state.cv.notify_all();
}

bool CommunicatorImpl::poll_once() {
  std::unique_lock step(poll_mutex_, std::try_to_lock);
  if (!step.owns_lock()) return false;
  {
    std::lock_guard list(list_mutex_);
    for (auto& s : incoming_) {
      active_.push_back(std::move(s));
      active_requests_.push_back(active_.back()->request);
    }
    incoming_.clear();
    if (pollers_changed_) {
      poller_snapshot_.clear();
      for (auto& p : pollers_) poller_snapshot_.push_back(p.second);
      pollers_changed_ = false;
    }
  }
  bool progressed = false;
  bool handed;
  {
    std::lock_guard mpi(mpi_mutex);
    handed = !handed_over_.empty();
  }
  if (!active_.empty() || handed) {
    std::vector<int> indices(active_.size());
    std::vector<MPI_Status> statuses(active_.size());
    int count = 0;
    int rc;
    {
      std::lock_guard mpi(mpi_mutex);
      for (auto& h : handed_over_) {
        active_.push_back(std::move(h));
        active_requests_.push_back(active_.back()->request);
        indices.emplace_back();
        statuses.emplace_back();
      }
      handed_over_.clear();
      rc = MPI_Testsome(static_cast<int>(active_requests_.size()), active_requests_.data(), &count, indices.data(),
                        statuses.data());
    }
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) count = 0;
    if (count > 0 && count != MPI_UNDEFINED) {
      progressed = true;
      std::vector<std::shared_ptr<RequestState>> finished;
      for (int k = 0; k < count; ++k) {
        const auto i = static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]);
        auto& st = statuses[static_cast<std::size_t>(k)];
        auto& s = *active_[i];
        std::size_t received = 0;
        if (s.is_receive) {
          int cancelled = 0;
          MPI_Test_cancelled(&st, &cancelled);
          if (!cancelled) received = received_bytes(st, s.size);
        }
        s.bytes = received;
        const int err = rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : MPI_SUCCESS;
        finished.push_back(active_[i]);
        active_[i]->request = MPI_REQUEST_NULL;
        complete(s, err);
      }
      std::size_t out = 0;
      for (std::size_t i = 0; i < active_.size(); ++i) {
        if (active_requests_[i] == MPI_REQUEST_NULL) continue;
        active_[out] = std::move(active_[i]);
        active_requests_[out] = active_requests_[i];
        ++out;
      }
      active_.resize(out);
      active_requests_.resize(out);
    }
  }
  std::size_t streaming = 0;
  for (const auto& s : active_) streaming += s->size;
  streaming_bytes_.store(streaming, std::memory_order_relaxed);
  for (auto& p : poller_snapshot_) progressed = p() || progressed;
  return progressed;
}

void CommunicatorImpl::unattended() noexcept {
  {
    std::lock_guard lock(sleep_mutex_);
    woken_ = true;
  }
  sleep_cv_.notify_one();
}

bool CommunicatorImpl::poll() noexcept {
  try {
    return poll_once();
  } catch (...) {
    return false;  // only a failed allocation gets here; the progress thread will meet it too
  }
}

void CommunicatorImpl::wake() {
  // A progress thread in its timed sleep finds new work within max_sleep anyway; waking it at
  // every send would cost a context switch per message.
  if (!progress_asleep_.load(std::memory_order_seq_cst)) return;
  {
    std::lock_guard lock(sleep_mutex_);
    woken_ = true;
  }
  sleep_cv_.notify_one();
}

void CommunicatorImpl::progress_loop() {
  // The progress thread never spins: it polls, then sleeps ever longer (1 us doubling to
  // max_sleep) while work is outstanding, and sleeps untimed once nothing has been tracked for a
  // while. Threads in Request::wait poll for themselves meanwhile, so a send or receive never
  // pays for waking this thread.
  using clock = std::chrono::steady_clock;
  constexpr auto deep_sleep_after = std::chrono::milliseconds(10);
  // Below this a tracked transfer fits MPI's eager buffers and moves at once.
  constexpr std::size_t streamed = 64 * 1024;
  auto last_activity = clock::now();
  auto sleep = std::chrono::microseconds(1);
  constexpr auto not_streaming = clock::time_point::max();
  auto stream_until = not_streaming;
  for (;;) {
    const bool progressed = poll_once();
    if (progressed) {
      last_activity = clock::now();
      sleep = std::chrono::microseconds(1);
      stream_until = not_streaming;
    }
    if (attending_workers() > 0) {
      // Awake executor workers poll between their tasks and before they sleep, and the last to
      // sleep (or block: BlockedWorker) wakes this thread (unattended): meanwhile it only backs
      // them up, every 5 max_sleep (1 ms), instead of waking every few microseconds to take a
      // core from them. (At max_sleep, Jacobi3D's blocks stepped 7 % slower.)
      std::unique_lock lock(sleep_mutex_);
      if (stop_) return;
      sleep_cv_.wait_for(lock, 5 * max_sleep, [this] { return woken_ || stop_; });
      woken_ = false;
      continue;
    }
    if (progressed) continue;
    // Nobody else polls now, and a large transfer moves piece by piece only while MPI is called
    // (the shared-memory transport's fragments, a rendezvous): polling at the sleeps' pace made
    // Jacobi3D's 1 MiB of faces a rank take 5 ms instead of a fraction of one. So, as wait()
    // does, poll (yielding the core) as long as the bytes take at 1 GB/s, then sleep. No worker
    // of this rank is awake to want the core.
    if (const std::size_t bytes = streaming_bytes_.load(std::memory_order_relaxed); bytes >= streamed) {
      const auto now = clock::now();
      if (stream_until == not_streaming) stream_until = now + spin + std::chrono::nanoseconds(bytes);
      if (now < stream_until) {
        std::this_thread::yield();
        continue;
      }
    } else {
      stream_until = not_streaming;
    }
    auto nothing_tracked = [this] {
      std::lock_guard step(poll_mutex_);  // always poll_mutex_ before list_mutex_
      std::lock_guard list(list_mutex_);
      return active_.empty() && incoming_.empty() && pollers_.empty();
    };
    const bool idle = nothing_tracked();
    std::unique_lock lock(sleep_mutex_);
    if (stop_) return;
    if (idle && clock::now() - last_activity > deep_sleep_after) {
      // Announce the untimed sleep before the last look, so that a track() either is seen here
      // or sees the flag and notifies.
      progress_asleep_.store(true, std::memory_order_seq_cst);
      lock.unlock();
      const bool still_idle = nothing_tracked();
      lock.lock();
      if (still_idle) sleep_cv_.wait(lock, [this] { return woken_ || stop_; });
      progress_asleep_.store(false, std::memory_order_seq_cst);
      woken_ = false;
      last_activity = clock::now();
      sleep = std::chrono::microseconds(1);
      continue;
    }
    if (polling_waiters_.load(std::memory_order_acquire) > 0) {
      sleep_cv_.wait_for(lock, max_sleep, [this] { return woken_ || stop_; });
    } else {
      sleep_cv_.wait_for(lock, sleep, [this] { return woken_ || stop_; });
      sleep = std::min(sleep * 2, max_sleep);
    }
    if (woken_) sleep = std::chrono::microseconds(1);
    woken_ = false;
  }
}

bool CommunicatorImpl::test_untracked(RequestState& state) {
  std::lock_guard mpi(mpi_mutex);
  if (state.done.load(std::memory_order_acquire)) return true;
  if (state.tracked.load(std::memory_order_acquire)) return false;  // the progress thread's now
  int flag = 0;
  MPI_Status status;
  const int rc = MPI_Test(&state.request, &flag, &status);
  // Untracked, so nobody sleeps on it: waiters test it themselves until they hand it over.
  if (rc != MPI_SUCCESS) {
    complete(state, rc, false);
    return true;
  }
  if (!flag) return false;
  if (state.is_receive) state.bytes = received_bytes(status, state.size);
  complete(state, MPI_SUCCESS, false);
  return true;
}

void CommunicatorImpl::wait(RequestState& state) {
  using clock = std::chrono::steady_clock;
  if (state.done.load(std::memory_order_acquire)) {
    if (state.error) std::rethrow_exception(state.error);
    return;
  }
  const bool untracked = !state.tracked.load(std::memory_order_acquire);
  // A small send is done at the first test, and a small receive within a few dozen: reading the
  // clock (a tenth of a small message's round trip) waits until those have failed.
  if (untracked) {
    for (int i = 0; i < 64; ++i) {
      if (!test_untracked(state)) continue;
      if (state.error) std::rethrow_exception(state.error);
      return;
    }
  }
  // A large transfer needs MPI called while it streams (the shared-memory and network transports
  // move it piece by piece), as MPI_Wait would: poll as long as it takes at 1 GB/s, then sleep.
  const auto spin_until = clock::now() + spin + std::chrono::nanoseconds(state.size);
  polling_waiters_.fetch_add(1, std::memory_order_acq_rel);
  if (untracked) {
    // A yield is a system call, dearer than a small message, and so is most of a clock read:
    // poll a few times between them.
    for (unsigned i = 1; !test_untracked(state); ++i) {
      if (i % 8 == 0 && clock::now() >= spin_until) break;
      if (i % 32 == 0) std::this_thread::yield();
    }
  } else {
    while (!state.done.load(std::memory_order_acquire) && clock::now() < spin_until)
      if (!poll_once()) std::this_thread::yield();
  }
  polling_waiters_.fetch_sub(1, std::memory_order_acq_rel);
  if (!state.done.load(std::memory_order_acquire)) {
    if (!state.tracked.load(std::memory_order_acquire)) {
      // Another waiter on a copy of the same Request may be testing it: the hand-over happens
      // under mpi_mutex (which test_untracked holds), once, and the progress thread collects it
      // under the same lock before its next test.
      std::lock_guard mpi(mpi_mutex);
      if (!state.done.load(std::memory_order_acquire) && !state.tracked.load(std::memory_order_acquire)) {
        state.tracked.store(true, std::memory_order_release);
        handed_over_.push_back(state.shared_from_this());
      }
    }
    {
      std::lock_guard lock(sleep_mutex_);
      woken_ = true;  // the progress thread takes over the polling, from now
    }
    sleep_cv_.notify_one();
    BlockedWorker blocked;  // a worker waiting here polls nothing: the progress thread must
    std::unique_lock lock(state.mutex);
    state.cv.wait(lock, [&] { return state.done.load(std::memory_order_acquire); });
  }
  if (state.error) std::rethrow_exception(state.error);
}

}  // namespace detail

bool Request::ready() const {
  if (!state_) throw Error("tessera::dist::Request: an empty request (default-constructed)");
  if (state_->done.load(std::memory_order_acquire)) return true;
  // Tracked and not done: the progress engine has it; untracked: test it here.
  return !state_->tracked.load(std::memory_order_acquire) && state_->owner->test_untracked(*state_);
}

Request::~Request() {
  // The last handle on a request nobody waited for: the progress engine completes it, so MPI's
  // request is freed and the communicator's close finds it.
  if (state_ && state_.use_count() == 1 && !state_->tracked.load(std::memory_order_acquire) &&
      !state_->done.load(std::memory_order_acquire)) {
    auto* owner = state_->owner;
    owner->track(std::move(state_));
  }
}

void Request::wait() const {
  if (!state_) throw Error("tessera::dist::Request: an empty request (default-constructed)");
  if (state_->done.load(std::memory_order_acquire)) {
    if (state_->error) std::rethrow_exception(state_->error);
    return;
  }
  state_->owner->wait(*state_);
}

std::size_t Request::bytes() const {
  if (!state_) throw Error("tessera::dist::Request: an empty request (default-constructed)");
  return state_->bytes;
}

Communicator::Communicator(int* argc, char*** argv, CommunicatorOptions options)
    : impl_(std::make_unique<detail::CommunicatorImpl>(argc, argv, options)) {}

Communicator::~Communicator() = default;

int Communicator::rank() const noexcept { return impl_->rank; }
int Communicator::size() const noexcept { return impl_->size; }
int Communicator::ranks_on_node() const noexcept { return impl_->node_size; }
unsigned Communicator::cores_per_rank() const noexcept {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, hw / static_cast<unsigned>(std::max(1, impl_->node_size)));
}
ExecutorOptions Communicator::executor_options() const noexcept {
  ExecutorOptions o;
  o.gpu_workers = 1;
  o.cpu_workers = cores_per_rank() - 1;
  return o;
}
bool Communicator::cuda_aware() const noexcept { return impl_->cuda_aware; }

std::string Communicator::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string v(text, static_cast<std::size_t>(length));
  if (auto nl = v.find_first_of("\n,"); nl != std::string::npos) v.resize(nl);
  return v;
}

namespace {
void check_user_tag(int tag) {
  if (tag < 0 || tag > Communicator::max_user_tag)
    throw Error("tessera::dist: tag " + std::to_string(tag) + " is out of range: user tags are 0 to " +
                std::to_string(Communicator::max_user_tag) + " (tessera uses the ones above)");
}
}  // namespace

Request Communicator::send_bytes(const void* data, std::size_t bytes, int dest, int tag) {
  check_user_tag(tag);
  return impl_->start_send(data, bytes, dest, tag);
}

Request Communicator::recv_bytes(void* data, std::size_t capacity, int source, int tag) {
  check_user_tag(tag);
  return impl_->start_recv(data, capacity, source == any_source ? MPI_ANY_SOURCE : source, tag);
}

Request Communicator::send(Buffer& buffer, RowRange rows, int dest, int tag) {
  check_user_tag(tag);
  auto* base = static_cast<std::byte*>(buffer.request(Access::read, rows).get());
  const std::size_t row_bytes = buffer.row_bytes();
  try {
    return impl_->start_send(base + rows.begin * row_bytes, rows.size() * row_bytes, dest, tag,
                             [&buffer, rows](detail::RequestState&) { buffer.release(Access::read, rows); });
  } catch (...) {
    buffer.release(Access::read, rows);
    throw;
  }
}

Request Communicator::recv(Buffer& buffer, RowRange rows, int source, int tag) {
  check_user_tag(tag);
  auto* base = static_cast<std::byte*>(buffer.request(Access::write, rows).get());
  const std::size_t row_bytes = buffer.row_bytes();
  const std::size_t expected = rows.size() * row_bytes;
  try {
    return impl_->start_recv(base + rows.begin * row_bytes, expected, source == any_source ? MPI_ANY_SOURCE : source,
                             tag, [&buffer, rows, expected, name = buffer.name()](detail::RequestState& s) {
                               buffer.release(Access::write, rows);
                               if (!s.error && s.bytes != expected)
                                 throw Error("tessera::dist: " + s.what() + " into rows [" +
                                             std::to_string(rows.begin) + ", " + std::to_string(rows.end) +
                                             ") of buffer '" + name + "' got " + std::to_string(s.bytes) +
                                             " B, not the " + std::to_string(expected) + " B of those rows");
                             });
  } catch (...) {
    buffer.release(Access::write, rows);
    throw;
  }
}

namespace {
// Channels of tessera::Ranks (distributed tensors and graphs) use tags above the user's and the
// mobile objects' (which have a communicator of their own anyway).
int channel_tag(std::uint64_t channel) { return (1 << 21) + static_cast<int>(channel & ((1u << 29) - 1)); }
}  // namespace

void Communicator::post_send(const void* data, std::size_t bytes, int dest, std::uint64_t channel, Done done) {
  impl_->start_send(data, bytes, dest, channel_tag(channel), [done = std::move(done)](detail::RequestState& s) {
    done(s.error);
  });
}

void Communicator::post_recv(void* data, std::size_t bytes, int source, std::uint64_t channel, Done done) {
  impl_->start_recv(data, bytes, source, channel_tag(channel), [done = std::move(done), bytes](detail::RequestState& s) {
    if (!s.error && s.bytes != bytes)
      done(std::make_exception_ptr(Error("tessera::dist: " + s.what() + " got " + std::to_string(s.bytes) +
                                         " B, not the " + std::to_string(bytes) +
                                         " B expected: the ranks disagree about a distributed tensor or graph")));
    else
      done(s.error);
  });
}

void Communicator::fail(const std::string& what) noexcept {
  std::fprintf(stderr, "tessera::dist: rank %d failed: %s\nThe other ranks wait for its messages, so MPI_Abort ends them all.\n",
               impl_->rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(impl_->comm, 1);
  std::abort();  // MPI_Abort does not return; if it did, this rank must still not go on
}

Node& Communicator::send_node(NodeGraph& graph, const void* data, std::size_t bytes, int dest, int tag) {
  check_user_tag(tag);
  auto* impl = impl_.get();
  return graph.emplace_async([impl, data, bytes, dest, tag](AsyncDone done) {
    impl->start_send(data, bytes, dest, tag, [done](detail::RequestState& s) {
      if (s.error)
        done.fail(s.error);
      else
        done.complete();
    });
  });
}

Node& Communicator::recv_node(NodeGraph& graph, void* data, std::size_t bytes, int source, int tag) {
  check_user_tag(tag);
  auto* impl = impl_.get();
  const int from = source == any_source ? MPI_ANY_SOURCE : source;
  return graph.emplace_async([impl, data, bytes, from, tag](AsyncDone done) {
    impl->start_recv(data, bytes, from, tag, [done](detail::RequestState& s) {
      if (s.error)
        done.fail(s.error);
      else
        done.complete();
    });
  });
}

void Communicator::barrier() {
  auto state = detail::make_request_state();
  state->label = "barrier";
  {
    std::lock_guard mpi(impl_->mpi_mutex);
    detail::check_mpi(MPI_Ibarrier(impl_->comm, &state->request), *state);
  }
  impl_->track(state).wait();
}

namespace {
MPI_Op mpi_op(Communicator::Reduce op) {
  switch (op) {
    case Communicator::Reduce::sum:
      return MPI_SUM;
    case Communicator::Reduce::min:
      return MPI_MIN;
    default:
      return MPI_MAX;
  }
}

template <class T>
T all_reduce_value(detail::CommunicatorImpl& impl, T value, MPI_Datatype type, MPI_Op op, const char* label) {
  T result{};
  auto state = detail::make_request_state();
  state->label = label;
  state->owner = &impl;
  {
    std::lock_guard mpi(impl.mpi_mutex);
    detail::check_mpi(MPI_Iallreduce(&value, &result, 1, type, op, impl.comm, &state->request), *state);
  }
  impl.wait(*state);
  return result;
}

}  // namespace

double Communicator::all_reduce(double value, Reduce op) {
  return all_reduce_value(*impl_, value, MPI_DOUBLE, mpi_op(op), "all_reduce of a double");
}

std::int64_t Communicator::all_reduce(std::int64_t value, Reduce op) {
  return all_reduce_value(*impl_, value, MPI_INT64_T, mpi_op(op), "all_reduce of an integer");
}

}  // namespace tessera::dist
