#pragma once
// The mobile-object runtime's private state. One lock (`mutex`) guards the tables; handlers run
// without it. All traffic between ranks is frames packed into batches, one MPI message per
// batch and destination, on one tag: MPI's non-overtaking rule then keeps every pair of ranks in
// order, which migration relies on (an object and the messages forwarded after it).

#include "communicator_impl.hpp"

#include <tessera/dist/objects.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/job.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <unordered_map>

namespace tessera::dist::detail {

constexpr int objects_tag = (1 << 20) + 1;

/// Names from 2^63 up are the runtime's own: each rank's mailbox for put/get replies.
constexpr std::uint64_t reserved_names = std::uint64_t{1} << 63;
inline std::uint64_t mailbox_of(int rank) { return reserved_names + static_cast<std::uint64_t>(rank); }

/// The object behind a shared Buffer; it stays where the buffer is.
struct SharedRows {
  static constexpr bool pinned = true;
  Buffer* buffer = nullptr;
};
/// Where put/get replies land on each rank.
struct Mailbox {
  static constexpr bool pinned = true;
};
constexpr std::uint32_t migrate_handler = 0xffffffffu;

enum class Kind : std::uint8_t {
  // (Handler messages and migration requests travel as call frames, which carry no Kind.)
  register_name = 1,  // to the home rank: object, rank
  located,         // to the home rank: object, rank, moves
  migrate,         // the object itself, with its queues and order state
  hint,            // to a sender: where an object it wrote to now lives
  duplicate,       // to a rank that registered a name already taken
  no_such_object,  // to a sender: nobody registered that name
  probe,           // termination detection (rank 0 asks)
  report,          // ... and every rank answers
  done,            // ... and rank 0 declares it
  drop_missing,    // rank 0: drop messages to names nobody registered, telling their senders
  abort,           // a handler threw somewhere: everyone stops
  steal_request,   // from a rank with nothing to run: the thief's rank
  steal_refused,   // ... and the answer of a rank with nothing to spare
};

/// The bytes of a batch, allocated without zeroing: MPI writes every byte of a received one, and
/// a sent one is copied in whole (zeroing 64 KiB per batch first cost more than the copy).
class BatchBytes {
 public:
  const std::byte* data() const noexcept { return data_.get(); }
  std::byte* data() noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  /// `n` bytes whose contents the caller writes next.
  void resize_for_overwrite(std::size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<std::byte[]>(n);
      capacity_ = n;
    }
    size_ = n;
  }
  void assign(const std::byte* from, std::size_t n) {
    resize_for_overwrite(n);
    if (n > 0) std::memcpy(data_.get(), from, n);
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

/// A message's argument bytes: its own (sent from this rank), or a view into the batch it came
/// in, which the view keeps alive, so a received message is never copied out of its batch.
struct Args {
  std::vector<std::byte> own;
  std::shared_ptr<const BatchBytes> batch;
  const std::byte* data = nullptr;
  std::size_t size = 0;

  Args() = default;
  explicit Args(std::vector<std::byte> bytes) : own(std::move(bytes)), data(own.data()), size(own.size()) {}
  Args(std::shared_ptr<const BatchBytes> in, const std::byte* at, std::size_t n)
      : batch(std::move(in)), data(at), size(n) {}
  // A moved vector keeps its buffer, so `data` stays right; a copy would not.
  Args(Args&&) noexcept = default;
  Args& operator=(Args&&) noexcept = default;
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
};

using Batch = std::shared_ptr<const BatchBytes>;

/// A handler message waiting for its object; or, with `frames` > 0, a run of that many call frames
/// in one received batch, one after the other, from one sender in sequence order and to one
/// object (the first at args.data, `seq` its sequence number): the common case of many small
/// messages to one object is then queued and run from the batch without a Message each.
struct Message {
  std::uint32_t handler = 0;
  std::int32_t sender = 0;
  std::uint64_t seq = 0;
  std::uint32_t hops = 0;
  Args args;
  std::uint32_t frames = 0;
  std::size_t next_frame = 0;  // a run's end: the offset in the batch of the frame after it

  /// Handler messages this entry stands for.
  std::size_t calls() const noexcept { return frames > 0 ? frames : 1; }
};

/// Frames waiting to go to one rank. A buffer that only grows and is copied out whole when sent:
/// writing a frame is then a few stores into lines this core already holds (a std::vector zeroes
/// what it grows by, inserting into one is a call, and a buffer handed to MPI comes back with
/// its lines in the receiving core's cache).
class Outbox {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  const std::byte* data() const noexcept { return data_.get(); }
  void clear() noexcept { size_ = 0; }
  /// Pads with zeros to a multiple of `alignment` (at most 16), then makes room for `n` bytes
  /// and returns where they go.
  std::byte* append_aligned(std::size_t alignment, std::size_t n) {
    reserve(size_ + 16 + n);
    std::memset(data_.get() + size_, 0, 16);  // a fixed-size store covers any padding
    size_ = (size_ + alignment - 1) / alignment * alignment;
    std::byte* at = data_.get() + size_;
    size_ += n;
    return at;
  }

 private:
  void reserve(std::size_t bytes) {
    if (bytes <= capacity_) return;
    const std::size_t grown = std::max({bytes, 2 * capacity_, std::size_t{4096}});
    auto bigger = std::make_unique_for_overwrite<std::byte[]>(grown);
    if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = grown;
  }
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class ObjectsImpl;

struct LocalObject;

struct ObjectJob : Job {
  ObjectJob() : Job(&ObjectJob::run_job) {}
  static void run_job(Job& self);
  ObjectsImpl* impl = nullptr;
  LocalObject* object = nullptr;
};

struct LocalObject {
  std::uint64_t id = 0;
  std::uint32_t type = 0;  // index into ObjectsImpl::types
  void* ptr = nullptr;
  std::uint64_t moves = 0;
  double load = 0;                                                 // seconds in handlers since the last rebalance
  std::deque<Message> queue;                                       // in order, ready to run
  std::size_t queued_calls = 0;                                    // handler messages in `queue`
  std::vector<Message> burst;                                      // run_object's, kept for its capacity
  std::unordered_map<std::int32_t, std::uint64_t> expected;        // next sequence number per sender
  std::map<std::pair<std::int32_t, std::uint64_t>, Message> held;  // arrived early
  bool scheduled = false;
  bool running = false;  // a worker runs a burst of its handlers now
  bool retired = false;  // moved away while its job waited on the executor
  ObjectJob job;
};

struct DirectoryEntry {
  int rank = -1;
  std::uint64_t moves = 0;
  int registered_by = -1;
};

struct Counters {
  std::int64_t frames_out = 0;
  std::int64_t frames_in = 0;
  std::int64_t calls_sent = 0;
  std::int64_t calls_done = 0;
  std::int64_t waiting = 0;
  bool operator==(const Counters&) const = default;
};

class ObjectsImpl {
 public:
  ObjectsImpl(Objects& self, Communicator& comm, ObjectsOptions options);
  ~ObjectsImpl();

  Objects& self;
  Communicator& comm;
  CommunicatorImpl& ci;
  std::unique_ptr<Executor> own_executor;  // when ObjectsOptions names none
  Executor& executor;
  ObjectsOptions options;
  int rank;
  int size;
  // Each instance talks on a duplicate of the communicator: a frame of the next instance can then
  // never be read by one still closing.
  MPI_Comm channel = MPI_COMM_NULL;

  std::uint32_t register_handler(std::string name, const Objects::TypeOps* type,
                                 std::function<void(void*, HandlerContext&, Reader&)> invoke);
  void add_object(std::uint64_t id, const Objects::TypeOps* type, void* object);
  void send_call(std::uint64_t id, std::uint32_t handler, std::vector<std::byte> args);
  void send_call(std::uint64_t id, std::uint32_t handler, const std::byte* args, std::size_t bytes);
  void migrate(std::uint64_t id, int dest);
  void wait();
  std::size_t rebalance(const BalancePolicy& policy);
  void run_object(LocalObject& object);
  void busy_begin();
  void busy_end();
  const std::type_info& type_of(const LocalObject& o) {
    std::shared_lock lock(handlers_mutex_);
    return *types_[o.type]->type;
  }

  mutable std::mutex mutex;
  std::unordered_map<std::uint64_t, std::unique_ptr<LocalObject>> objects;
  ObjectsStatistics stats;

  // put/get: the handlers (registered first on every rank) and the futures waiting for replies.
  std::uint32_t put_handler = 0;
  std::uint32_t get_handler = 0;
  std::mutex promises_mutex;
  std::uint64_t next_ticket = 0;
  std::unordered_map<std::uint64_t, std::promise<void>> put_promises;
  std::unordered_map<std::uint64_t, std::promise<std::vector<std::byte>>> get_promises;
  /// A new ticket whose promise waits in `promises` for the owner's reply.
  template <typename T>
  std::uint64_t await_reply(std::unordered_map<std::uint64_t, std::promise<T>>& promises, std::promise<T> promise) {
    std::lock_guard lock(promises_mutex);
    const std::uint64_t ticket = next_ticket++;
    promises.emplace(ticket, std::move(promise));
    return ticket;
  }
  /// The promise of `ticket`, taken out of `promises`; none for a ticket already answered or
  /// given up (a request that could not be sent).
  template <typename T>
  std::optional<std::promise<T>> take_reply(std::unordered_map<std::uint64_t, std::promise<T>>& promises,
                                            std::uint64_t ticket) {
    std::lock_guard lock(promises_mutex);
    auto it = promises.find(ticket);
    if (it == promises.end()) return std::nullopt;
    std::optional<std::promise<T>> promise(std::move(it->second));
    promises.erase(it);
    return promise;
  }
  void finish_put(std::uint64_t ticket, const std::string& error);
  void finish_get(std::uint64_t ticket, const std::string& error, std::span<const std::byte> bytes);
  bool movable(const LocalObject& o) {
    std::shared_lock lock(handlers_mutex_);
    return types_[o.type]->movable;
  }

 private:
  struct HandlerEntry {
    std::string name;
    std::uint32_t type;
    std::function<void(void*, HandlerContext&, Reader&)> invoke;
  };

  int home(std::uint64_t id) const { return static_cast<int>(id % static_cast<std::uint64_t>(size)); }
  bool poll();
  void process_batch(int source, const Batch& batch);
  // What append_to_run found for the last frame of a batch, until a frame takes another path.
  struct RunMemo {
    LocalObject* object = nullptr;
    std::uint64_t id = 0;
    std::int32_t sender = 0;
    std::uint64_t* expected = nullptr;
    std::uint32_t handler = migrate_handler;  // the last handler checked against object's type
  };
  bool append_to_run(int source, const std::byte* frame, std::size_t next_frame, const Batch& batch, RunMemo& memo);
  void enqueue(LocalObject& object, Message m);
  std::shared_ptr<BatchBytes> pooled_buffer();
  void process_frame(int source, Reader& in, const Batch& batch);
  // Each of these runs with `mutex` held.
  void route(std::uint64_t id, Message m);
  void deliver(LocalObject& object, Message m);
  void schedule(LocalObject& object);
  void emit(int dest, const std::vector<std::byte>& frame, bool counted = true);
  void send_locked(std::uint64_t id, std::uint32_t handler, const std::byte* args, std::size_t bytes,
                   std::vector<std::byte>* owned);
  void emit_call(int dest, std::uint64_t id, const Message& m);
  void emit_call(int dest, std::uint64_t id, std::uint32_t handler, std::int32_t sender, std::uint64_t seq,
                 std::uint32_t hops, const std::byte* args, std::size_t bytes);
  void set_location(std::uint64_t id, int where, std::uint64_t moves, int registered_by);
  // `job_running`: called from the object's own job (else its job is still queued).
  void do_migrate(LocalObject& object, int dest, bool job_running);
  void install(Reader& in, const Batch& batch);
  void fail(std::string message, bool broadcast);
  void maybe_report();
  void coordinator_receive(const Counters& c);
  bool idle() const;
  void flush();
  void reap_sends();
  void maybe_steal();
  void answer_steal(int thief);
  void wake_poller();

  // Batch buffers come back here when their last message has run (received) or MPI has sent
  // them: a fresh 64 KiB buffer per batch cost page faults and zeroing. One pool for the
  // process, so that a runtime made after another starts with its buffers; shared with the
  // buffers' deleters, which may run after this runtime is gone.
  struct BufferPool {
    std::mutex mutex;
    std::vector<std::unique_ptr<BatchBytes>> spare;
  };
  static std::shared_ptr<BufferPool> process_pool() {
    static const auto pool = std::make_shared<BufferPool>();
    return pool;
  }
  std::shared_ptr<BufferPool> pool_ = process_pool();

  std::shared_mutex handlers_mutex_;
  std::deque<HandlerEntry> handlers_;  // entries never move (run_object holds pointers)
  std::vector<const Objects::TypeOps*> types_;

  std::unordered_map<std::uint64_t, int> forward_;
  std::unordered_map<std::uint64_t, int> cache_;
  std::unordered_map<std::uint64_t, DirectoryEntry> directory_;
  std::unordered_map<std::uint64_t, std::vector<Message>> unregistered_;
  std::unordered_map<std::uint64_t, std::uint64_t> next_seq_;
  // The last object this rank sent to: its sequence counter, and the rank the message went to
  // (-1: delivered or routed here) as of `routes` (routes_version_ then).
  struct LastSent {
    std::uint64_t id = 0;
    std::uint64_t* seq = nullptr;
    int dest = -1;
    std::uint64_t routes = 0;
  };
  LastSent last_sent_;
  std::uint64_t routes_version_ = 0;  // counts changes to objects, forward_ and cache_
  std::atomic<std::uint32_t> handler_count_{0};
  // What polls read without the lock, on a line of their own. `attention_` is set (under `mutex`)
  // when a poll has work beyond its receives: frames waiting to be sent or being sent, or a wait()
  // in progress (`waiting_`); a poll that receives nothing and finds it clear leaves `mutex` alone,
  // so idle workers polling do not contend with a thread sending. The stamps: frames_out after
  // the last call frame written (a sender's), and as the last poll that looked saw it.
  alignas(64) std::atomic<bool> attention_{false};
  std::atomic<bool> waiting_{false};
  std::atomic<std::uint64_t> sent_stamp_{0};
  alignas(64) std::atomic<std::uint64_t> polled_stamp_{0};
  char stamps_end_[56] = {};
  std::vector<std::unique_ptr<LocalObject>> retired_;
  std::vector<Outbox> outbox_;
  // Batches MPI is sending, each with its bytes (kept until it is done).
  struct SendInFlight {
    MPI_Request request;
    std::shared_ptr<BatchBytes> bytes;
  };
  std::vector<SendInFlight> sending_;
  std::vector<MPI_Request> sending_requests_;  // reap_sends()'s, kept for their capacity
  std::vector<int> completed_;
  // Batches matched and being received, in the order they were matched (poll() only): each is
  // processed once it and every one before it have arrived, so each sender's order holds.
  struct ReceiveInFlight {
    MPI_Request request;
    int source;
    std::shared_ptr<BatchBytes> bytes;
  };
  std::deque<ReceiveInFlight> receiving_;
  bool process_received();

  // Work stealing: whether a request is out, how many ranks said no in a row (a whole round of
  // them pauses the asking until steal_resume_), and which rank is asked next.
  bool steal_outstanding_ = false;
  int steal_refusals_ = 0;
  int steal_next_ = 0;
  std::chrono::microseconds steal_pause_{0};
  std::chrono::steady_clock::time_point steal_resume_{};

  Counters counters_;
  int scheduled_ = 0;
  int busy_ = 0;

  // Termination detection.
  bool in_wait_ = false;
  std::uint64_t wait_epoch_ = 0;
  std::uint64_t done_epoch_ = 0;
  std::uint64_t probe_epoch_ = 0;  // a probe waiting for this rank to become idle
  std::uint64_t probe_wave_ = 0;
  bool probe_pending_ = false;
  // Rank 0 only.
  std::uint64_t wave_ = 0;
  bool wave_open_ = false;
  int reports_ = 0;
  Counters wave_sum_;
  Counters previous_sum_;
  bool previous_valid_ = false;

  std::condition_variable waiters_;
  std::string error_;
  bool error_local_ = false;
  bool closing_ = false;
  std::size_t poller_ = 0;
};

}  // namespace tessera::dist::detail
