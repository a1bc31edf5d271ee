#include "objects_impl.hpp"

#include <tessera/core/error.hpp>
#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>

namespace tessera::dist {
namespace detail {
namespace {

bool counted(Kind k) { return k != Kind::probe && k != Kind::report && k != Kind::done && k != Kind::abort; }

// Arguments start 16-byte aligned in their frame (frames start so in their batch), so arrays
// in them are aligned for reading in place.
constexpr std::size_t args_alignment = 16;
constexpr std::size_t frame_alignment = 16;
constexpr std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }
// A batch is frames, each at a multiple of frame_alignment. Each starts with a 64-bit word.
// A control frame: the word is its payload's length, and the payload (its Kind, then its fields)
// follows from byte 16. A handler message (a call frame, the hot path, kept small): the word holds
// call_mark in its top byte, the hops in the next, the argument bytes in the low 48 bits; the
// handler (4 B) and sender (4) follow, then the object (8) and the sequence number (8), and the
// arguments from byte 32.
constexpr std::size_t control_payload_at = 16;
constexpr std::size_t call_header_bytes = 32;
constexpr std::uint64_t call_mark = 0xCA;
constexpr std::uint64_t call_args_mask = (std::uint64_t{1} << 48) - 1;
// A batch goes out as one MPI message, whose size is an int.
constexpr std::size_t max_call_args = static_cast<std::size_t>(std::numeric_limits<int>::max()) - 2 * call_header_bytes;
static_assert(call_header_bytes % args_alignment == 0 && frame_alignment % args_alignment == 0);

void put_message(Writer& w, const Message& m) {
  w.put(m.handler);
  w.put(m.sender);
  w.put(m.seq);
  w.put(m.hops);
  w.put<std::uint64_t>(m.args.size);
  w.align(args_alignment);
  w.bytes(m.args.data, m.args.size);
}

Message get_message(Reader& r, const Batch& batch) {
  Message m;
  m.handler = r.get<std::uint32_t>();
  m.sender = r.get<std::int32_t>();
  m.seq = r.get<std::uint64_t>();
  m.hops = r.get<std::uint32_t>();
  const auto n = r.get<std::uint64_t>();
  r.align(args_alignment);
  m.args = Args(batch, r.position(), static_cast<std::size_t>(n));
  r.skip(static_cast<std::size_t>(n));
  return m;
}

void put_counters(Writer& w, const Counters& c) {
  w.put(c.frames_out);
  w.put(c.frames_in);
  w.put(c.calls_sent);
  w.put(c.calls_done);
  w.put(c.waiting);
}

Counters get_counters(Reader& r) {
  Counters c;
  c.frames_out = r.get<std::int64_t>();
  c.frames_in = r.get<std::int64_t>();
  c.calls_sent = r.get<std::int64_t>();
  c.calls_done = r.get<std::int64_t>();
  c.waiting = r.get<std::int64_t>();
  return c;
}

Counters& operator+=(Counters& a, const Counters& b) {
  a.frames_out += b.frames_out;
  a.frames_in += b.frames_in;
  a.calls_sent += b.calls_sent;
  a.calls_done += b.calls_done;
  a.waiting += b.waiting;
  return a;
}

std::string object_text(std::uint64_t id) { return "object " + std::to_string(id); }

// A control frame: its kind, then its fields.
template <class... Fields>
std::vector<std::byte> frame(Kind kind, const Fields&... fields) {
  std::vector<std::byte> f;
  Writer w(f);
  w.put(kind);
  (w.put(fields), ...);
  return f;
}

}  // namespace

static std::unique_ptr<Executor> make_node_share_executor(Communicator& c) {
  return std::make_unique<Executor>(c.executor_options());
}

void ObjectJob::run_job(Job& self) {
  auto& job = static_cast<ObjectJob&>(self);
  job.impl->run_object(*job.object);
}

ObjectsImpl::ObjectsImpl(Objects& owner, Communicator& c, ObjectsOptions opts)
    : self(owner),
      comm(c),
      ci(c.impl()),
      own_executor(opts.executor ? nullptr : make_node_share_executor(c)),
      executor(opts.executor ? *opts.executor : *own_executor),
      options(opts),
      rank(c.rank()),
      size(c.size()),
      outbox_(static_cast<std::size_t>(c.size())) {
  if (options.handler_burst == 0) options.handler_burst = 1;
  auto state = make_request_state();
  state->label = "MPI_Comm_idup for tessera::dist::Objects";
  {
    std::lock_guard mpi(ci.mpi_mutex);
    check_mpi(MPI_Comm_idup(ci.comm, &channel, &state->request), *state);
  }
  ci.track(state).wait();
  poller_ = ci.add_poller([this] { return poll(); });
}

ObjectsImpl::~ObjectsImpl() {
  {
    std::lock_guard lock(mutex);
    closing_ = true;
  }
  // Every frame any rank sent must arrive before MPI may be finalised: sum what was sent and
  // received everywhere until the two agree and no handler is running here.
  bool mpi_failed = false;
  for (;;) {
    // Handlers still running anywhere count too, so every rank decides alike.
    std::int64_t local[3];
    {
      std::lock_guard lock(mutex);
      flush();
      local[0] = counters_.frames_out;
      local[1] = counters_.frames_in;
      local[2] = scheduled_;
    }
    std::int64_t total[3] = {0, 0, 0};
    auto state = make_request_state();
    state->label = "the closing count of tessera::dist::Objects";
    {
      std::lock_guard mpi(ci.mpi_mutex);
      check_mpi(MPI_Iallreduce(local, total, 3, MPI_INT64_T, MPI_SUM, channel, &state->request), *state);
    }
    try {
      ci.track(state).wait();
    } catch (...) {
      mpi_failed = true;
      break;  // MPI itself failed: nothing more can arrive
    }
    if (total[0] == total[1] && total[2] == 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  ci.remove_poller(poller_);
  {
    // Counts agree only once every batch was processed; after a failure, a receive MPI may still
    // write into keeps its bytes, as a send does below.
    std::lock_guard mpi(ci.mpi_mutex);
    for (auto& r : receiving_) {
      MPI_Request_free(&r.request);
      new std::shared_ptr<BatchBytes>(std::move(r.bytes));  // deliberately never freed
    }
    receiving_.clear();
  }
  {
    // Every batch arrived (or MPI failed): what is still sending completes here. After a
    // failure a batch is let go instead, and its bytes kept, since MPI may still read them.
    std::lock_guard lock(mutex);
    std::lock_guard mpi(ci.mpi_mutex);
    for (auto& s : sending_) {
      if (!mpi_failed) {
        MPI_Wait(&s.request, MPI_STATUS_IGNORE);
      } else {
        MPI_Request_free(&s.request);
        new std::shared_ptr<BatchBytes>(std::move(s.bytes));  // deliberately never freed
      }
    }
    sending_.clear();
  }
  {
    std::lock_guard mpi(ci.mpi_mutex);
    MPI_Comm_free(&channel);
  }
  std::lock_guard lock(mutex);
  for (auto& [id, object] : objects) types_[object->type]->destroy(object->ptr);
  objects.clear();
}

std::uint32_t ObjectsImpl::register_handler(std::string name, const Objects::TypeOps* type,
                                            std::function<void(void*, HandlerContext&, Reader&)> invoke) {
  std::unique_lock lock(handlers_mutex_);
  std::uint32_t t = 0;
  while (t < types_.size() && *types_[t]->type != *type->type) ++t;
  if (t == types_.size()) types_.push_back(type);
  if (handlers_.size() >= migrate_handler - 1) throw Error("tessera::dist::Objects: too many handlers");
  handlers_.push_back({std::move(name), t, std::move(invoke)});
  handler_count_.store(static_cast<std::uint32_t>(handlers_.size()), std::memory_order_release);
  return static_cast<std::uint32_t>(handlers_.size() - 1);
}

void ObjectsImpl::add_object(std::uint64_t id, const Objects::TypeOps* type, void* ptr) {
  std::uint32_t t = 0;
  {
    std::shared_lock lock(handlers_mutex_);
    while (t < types_.size() && *types_[t]->type != *type->type) ++t;
    if (t == types_.size()) {
      type->destroy(ptr);
      throw Error("tessera::dist::Objects::add(" + object_text(id) +
                  "): its type has no handler; register the type's handlers (on every rank, in the same "
                  "order) before adding objects of it");
    }
  }
  std::lock_guard lock(mutex);
  auto refuse = [&](const std::string& why) {
    type->destroy(ptr);
    throw Error("tessera::dist::Objects::add(" + object_text(id) + "): " + why);
  };
  if (closing_) refuse("the runtime is closing");
  if (!error_.empty()) refuse("the runtime stopped after an error: " + error_);
  if (objects.count(id)) refuse("that name is already registered on this rank (" + std::to_string(rank) + ")");
  if (home(id) == rank) {
    auto d = directory_.find(id);
    if (d != directory_.end() && d->second.registered_by >= 0 && d->second.registered_by != rank)
      refuse("that name is already registered by rank " + std::to_string(d->second.registered_by));
  }
  auto object = std::make_unique<LocalObject>();
  object->id = id;
  object->type = t;
  object->ptr = ptr;
  auto& o = *object;
  objects.emplace(id, std::move(object));
  forward_.erase(id);
  cache_.erase(id);
  ++routes_version_;
  if (home(id) == rank) {
    set_location(id, rank, 0, rank);
  } else {
    emit(home(id), frame(Kind::register_name, id, static_cast<std::int32_t>(rank)));
  }
  schedule(o);
}

void ObjectsImpl::send_call(std::uint64_t id, std::uint32_t handler, std::vector<std::byte> args) {
  std::lock_guard lock(mutex);
  send_locked(id, handler, args.data(), args.size(), &args);
}

void ObjectsImpl::send_call(std::uint64_t id, std::uint32_t handler, const std::byte* args, std::size_t bytes) {
  std::lock_guard lock(mutex);
  send_locked(id, handler, args, bytes, nullptr);
}

void ObjectsImpl::send_locked(std::uint64_t id, std::uint32_t handler, const std::byte* args, std::size_t bytes,
                              std::vector<std::byte>* owned) {
  if (!error_.empty()) throw Error("tessera::dist::Objects: send to " + object_text(id) + " after an error: " + error_);
  if (closing_) throw Error("tessera::dist::Objects: send to " + object_text(id) + " while the runtime is closing");
  if (handler != migrate_handler && handler >= handler_count_.load(std::memory_order_acquire))
    throw Error("tessera::dist::Objects: send to " + object_text(id) + " with handler id " + std::to_string(handler) +
                ", which is not registered here");
  if (bytes > max_call_args)
    throw Error("tessera::dist::Objects: a message of " + std::to_string(bytes) + " B to " + object_text(id) +
                " is larger than a message can be (" + std::to_string(max_call_args) +
                " B: MPI counts bytes in an int); split it");
  // Senders write to one object many times in a row: its sequence counter is remembered (the
  // map's nodes never move, and no entry is ever erased), and where the last message to it went
  // while no object arrived, left or was heard of since.
  if (id != last_sent_.id || last_sent_.seq == nullptr) {
    last_sent_ = {id, &next_seq_[id], -1, 0};
  }
  const std::uint64_t seq = (*last_sent_.seq)++;
  ++counters_.calls_sent;
  if (handler != migrate_handler) ++stats.sent;
  if (last_sent_.dest >= 0 && last_sent_.routes == routes_version_) {
    emit_call(last_sent_.dest, id, handler, rank, seq, 0, args, bytes);
    return;
  }
  auto message = [&] {
    return Message{handler, rank, seq, 0,
                   owned ? Args(std::move(*owned)) : Args(std::vector<std::byte>(args, args + bytes))};
  };
  if (!objects.empty()) {
    if (auto it = objects.find(id); it != objects.end()) {
      deliver(*it->second, message());
      return;
    }
  }
  int dest = home(id);
  if (auto f = forward_.empty() ? forward_.end() : forward_.find(id); f != forward_.end())
    dest = f->second;
  else if (auto c = cache_.empty() ? cache_.end() : cache_.find(id); c != cache_.end())
    dest = c->second;
  if (dest == rank) {
    route(id, message());
    return;
  }
  last_sent_.dest = dest;
  last_sent_.routes = routes_version_;
  emit_call(dest, id, handler, rank, seq, 0, args, bytes);
}

void ObjectsImpl::migrate(std::uint64_t id, int dest) {
  if (dest < 0 || dest >= size)
    throw Error("tessera::dist::Objects::migrate(" + object_text(id) + ", " + std::to_string(dest) +
                "): there are ranks 0 to " + std::to_string(size - 1));
  std::vector<std::byte> args;
  Writer w(args);
  w.put(static_cast<std::int32_t>(dest));
  send_call(id, migrate_handler, std::move(args));
}

void ObjectsImpl::route(std::uint64_t id, Message m) {
  if (auto it = objects.find(id); it != objects.end()) {
    deliver(*it->second, std::move(m));
    return;
  }
  int dest = -1;
  if (auto f = forward_.find(id); f != forward_.end()) {
    dest = f->second;
  } else if (home(id) == rank) {
    auto d = directory_.find(id);
    if (d != directory_.end() && d->second.rank >= 0 && d->second.rank != rank) {
      dest = d->second.rank;
    } else {
      // Not registered yet (or never: wait() finds that out and tells the sender).
      unregistered_[id].push_back(std::move(m));
      ++counters_.waiting;
      return;
    }
  } else {
    dest = home(id);
  }
  if (m.sender != rank && m.hops == 0 && m.sender != dest)
    emit(m.sender, frame(Kind::hint, id, static_cast<std::int32_t>(dest)));
  if (m.sender != rank || m.hops > 0) ++stats.forwarded;
  ++m.hops;
  emit_call(dest, id, m);
}

void ObjectsImpl::deliver(LocalObject& object, Message m) {
  auto& expected = object.expected[m.sender];
  if (m.seq != expected) {
    object.held.emplace(std::make_pair(m.sender, m.seq), std::move(m));
    return;
  }
  const auto sender = m.sender;
  enqueue(object, std::move(m));
  ++expected;
  if (!object.held.empty()) {
    for (auto it = object.held.find({sender, expected}); it != object.held.end();
         it = object.held.find({sender, expected})) {
      enqueue(object, std::move(it->second));
      object.held.erase(it);
      ++expected;
    }
  }
  schedule(object);
}

void ObjectsImpl::enqueue(LocalObject& object, Message m) {
  object.queued_calls += m.calls();
  object.queue.push_back(std::move(m));
}

namespace {
struct CallHeader {
  std::uint64_t id;
  std::uint32_t handler;
  std::int32_t sender;
  std::uint64_t seq;
  std::uint32_t hops;
  std::uint64_t args;
};

std::uint64_t frame_word(const std::byte* f) {
  std::uint64_t word;
  std::memcpy(&word, f, sizeof word);
  return word;
}

bool is_call(std::uint64_t word) { return (word >> 56) == call_mark; }

// The fields emit_call wrote at the start of the call frame at `f`.
CallHeader read_call(const std::byte* f) {
  CallHeader h;
  auto get = [](const std::byte* at, auto& value) { std::memcpy(&value, at, sizeof value); };
  const std::uint64_t word = frame_word(f);
  h.args = word & call_args_mask;
  h.hops = static_cast<std::uint32_t>((word >> 48) & 0xff);
  get(f + 8, h.handler);
  get(f + 12, h.sender);
  get(f + 16, h.id);
  get(f + 24, h.seq);
  return h;
}

// Small arguments (the common 8 to 32 B) are copied as two overlapping fixed-size moves, not a
// call to memcpy, which was a tenth of a small message's cost to send.
void copy_arguments(std::byte* to, const std::byte* from, std::size_t n) {
  if (n >= 16 && n <= 32) {
    std::memcpy(to, from, 16);
    std::memcpy(to + n - 16, from + n - 16, 16);
  } else if (n >= 8 && n < 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n > 0) {
    std::memcpy(to, from, n);
  }
}

// Where the frame after the one at `offset` starts.
std::size_t frame_after(const std::byte* base, std::size_t offset) {
  const std::uint64_t word = frame_word(base + offset);
  const std::size_t end = is_call(word) ? offset + call_header_bytes + static_cast<std::size_t>(word & call_args_mask)
                                        : offset + control_payload_at + static_cast<std::size_t>(word);
  return round_up(end, frame_alignment);
}
}  // namespace

bool ObjectsImpl::append_to_run(int source, const std::byte* f, std::size_t next_frame, const Batch& batch,
                                RunMemo& memo) {
  const CallHeader h = read_call(f);
  if (h.handler == migrate_handler || h.handler >= handler_count_.load(std::memory_order_acquire)) return false;
  if (memo.object == nullptr || memo.id != h.id || memo.sender != h.sender) {
    auto it = objects.find(h.id);
    if (it == objects.end()) return false;
    memo.object = it->second.get();
    memo.id = h.id;
    memo.sender = h.sender;
    memo.expected = &memo.object->expected[h.sender];
    memo.handler = migrate_handler;
  }
  LocalObject& object = *memo.object;
  if (!object.held.empty() || h.seq != *memo.expected) return false;
  if (h.handler != memo.handler) {
    // A handler of another type is left to run_object, which reports it.
    std::shared_lock lock(handlers_mutex_);
    if (handlers_[h.handler].type != object.type) return false;
    memo.handler = h.handler;
  }
  if (source != rank) ++counters_.frames_in;
  ++*memo.expected;
  const std::size_t at = static_cast<std::size_t>(f - batch->data());
  if (!object.queue.empty()) {
    Message& last = object.queue.back();
    if (last.frames > 0 && last.args.batch == batch && last.sender == h.sender && last.next_frame == at) {
      ++last.frames;
      last.next_frame = next_frame;
      ++object.queued_calls;
      return true;  // scheduled already
    }
  }
  Message m{h.handler, h.sender, h.seq, h.hops, Args(batch, f, 0)};
  m.frames = 1;
  m.next_frame = next_frame;
  enqueue(object, std::move(m));
  schedule(object);
  return true;
}

void ObjectsImpl::schedule(LocalObject& object) {
  if (object.scheduled || object.queue.empty()) return;
  object.scheduled = true;
  ++scheduled_;
  object.job.impl = this;
  object.job.object = &object;
  executor.schedule(object.job);
}

void ObjectsImpl::emit(int dest, const std::vector<std::byte>& frame, bool count) {
  auto& box = outbox_[static_cast<std::size_t>(dest)];
  const bool was_empty = box.empty();
  std::byte* f = box.append_aligned(frame_alignment, control_payload_at + frame.size());
  const std::uint64_t length = frame.size();
  std::memcpy(f, &length, sizeof length);
  std::memset(f + sizeof length, 0, control_payload_at - sizeof length);
  if (!frame.empty()) std::memcpy(f + control_payload_at, frame.data(), frame.size());
  if (count) ++counters_.frames_out;
  if (box.size() >= options.batch_bytes)
    flush();
  else if (was_empty)
    wake_poller();
}

void ObjectsImpl::emit_call(int dest, std::uint64_t id, const Message& m) {
  emit_call(dest, id, m.handler, m.sender, m.seq, m.hops, m.args.data, m.args.size);
}

void ObjectsImpl::emit_call(int dest, std::uint64_t id, std::uint32_t handler, std::int32_t sender, std::uint64_t seq,
                            std::uint32_t hops, const std::byte* args, std::size_t bytes) {
  // Straight into the batch as a call frame: a handler message is the hot path, and a Writer's
  // put per field or a frame of its own cost more than the message.
  auto& box = outbox_[static_cast<std::size_t>(dest)];
  const bool was_empty = box.empty();
  std::byte* f = box.append_aligned(frame_alignment, call_header_bytes + bytes);
  auto put = [](std::byte* at, const auto& value) { std::memcpy(at, &value, sizeof value); };
  put(f, (call_mark << 56) | (std::uint64_t{std::min(hops, 255u)} << 48) | static_cast<std::uint64_t>(bytes));
  put(f + 8, handler);
  put(f + 12, sender);
  put(f + 16, id);
  put(f + 24, seq);
  copy_arguments(f + call_header_bytes, args, bytes);
  ++counters_.frames_out;
  sent_stamp_.store(static_cast<std::uint64_t>(counters_.frames_out), std::memory_order_relaxed);
  if (box.size() >= options.batch_bytes)
    flush();
  else if (was_empty)
    wake_poller();
}

std::shared_ptr<BatchBytes> ObjectsImpl::pooled_buffer() {
  std::unique_ptr<BatchBytes> bytes;
  {
    std::lock_guard lock(pool_->mutex);
    if (!pool_->spare.empty()) {
      bytes = std::move(pool_->spare.back());
      pool_->spare.pop_back();
    }
  }
  if (!bytes) bytes = std::make_unique<BatchBytes>();
  return std::shared_ptr<BatchBytes>(bytes.release(), [pool = pool_](BatchBytes* b) {
    std::unique_ptr<BatchBytes> owned(b);
    std::lock_guard lock(pool->mutex);
    if (pool->spare.size() < 128) pool->spare.push_back(std::move(owned));  // at most 8 MiB kept
  });
}

void ObjectsImpl::wake_poller() {
  attention_.store(true, std::memory_order_release);
  ci.wake();
}

void ObjectsImpl::flush() {
  for (std::size_t dest = 0; dest < outbox_.size(); ++dest) {
    if (outbox_[dest].empty()) continue;
    // The outbox stays this rank's and is copied out whole: its lines then stay in this core's
    // cache for the next messages, where a buffer MPI had handed to the receiving rank cost a
    // cache miss per line written (a third of a small message's cost), and one large copy
    // costs less than those misses.
    auto batch = pooled_buffer();
    batch->assign(outbox_[dest].data(), outbox_[dest].size());
    outbox_[dest].clear();
    ++stats.batches;
    // Tested here and in poll(), not handed to the progress engine: nobody waits for a batch
    // to leave, and each completion there woke the progress thread at once, which took the
    // core from the sending thread thousands of times a second.
    if (batch->size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw Error("tessera::dist::Objects: " + std::to_string(batch->size()) + " B of messages to rank " +
                  std::to_string(dest) + " are more than one MPI message can carry");
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    {
      std::lock_guard mpi(ci.mpi_mutex);
      rc = MPI_Isend(batch->data(), static_cast<int>(batch->size()), MPI_BYTE, static_cast<int>(dest), objects_tag,
                     channel, &request);
    }
    if (rc != MPI_SUCCESS)
      throw_mpi_error(rc, "tessera::dist::Objects: sending " + std::to_string(batch->size()) +
                              " B of messages to rank " + std::to_string(dest));
    sending_.push_back({request, std::move(batch)});
  }
  reap_sends();
}

void ObjectsImpl::reap_sends() {
  if (sending_.empty()) return;
  sending_requests_.resize(sending_.size());
  completed_.resize(sending_.size());
  for (std::size_t i = 0; i < sending_.size(); ++i) sending_requests_[i] = sending_[i].request;
  int count = 0;
  int rc = MPI_SUCCESS;
  {
    std::lock_guard mpi(ci.mpi_mutex);
    rc = MPI_Testsome(static_cast<int>(sending_requests_.size()), sending_requests_.data(), &count, completed_.data(),
                      MPI_STATUSES_IGNORE);
  }
  if (rc != MPI_SUCCESS) {
    fail("rank " + std::to_string(rank) + ": sending messages to another rank failed (MPI error " + std::to_string(rc) +
             ")",
         false);
    return;
  }
  if (count == MPI_UNDEFINED || count == 0) return;
  for (std::size_t i = 0; i < sending_.size(); ++i) sending_[i].request = sending_requests_[i];
  std::erase_if(sending_, [](const SendInFlight& s) { return s.request == MPI_REQUEST_NULL; });
}

void ObjectsImpl::set_location(std::uint64_t id, int where, std::uint64_t moves, int registered_by) {
  auto& entry = directory_[id];
  if (registered_by >= 0) entry.registered_by = registered_by;
  if (entry.rank < 0 || moves >= entry.moves) {
    entry.rank = where;
    entry.moves = moves;
  }
  auto waiting = unregistered_.find(id);
  if (waiting == unregistered_.end()) return;
  auto messages = std::move(waiting->second);
  unregistered_.erase(waiting);
  counters_.waiting -= static_cast<std::int64_t>(messages.size());
  for (auto& m : messages) route(id, std::move(m));
}

void ObjectsImpl::do_migrate(LocalObject& object, int dest, bool job_running) {
  std::vector<std::byte> f;
  Writer w(f);
  w.put(Kind::migrate);
  w.put(object.id);
  w.put(object.type);
  w.put(object.moves + 1);
  w.put(object.load);
  w.put<std::uint64_t>(object.expected.size());
  for (const auto& [sender, seq] : object.expected) {
    w.put(sender);
    w.put(seq);
  }
  w.put<std::uint64_t>(object.held.size());
  for (const auto& [key, m] : object.held) put_message(w, m);
  w.put<std::uint64_t>(object.queued_calls);
  for (const auto& m : object.queue) {
    if (m.frames == 0) {
      put_message(w, m);
      continue;
    }
    // A run goes as the messages it stands for.
    const std::byte* base = m.args.batch->data();
    std::size_t at = static_cast<std::size_t>(m.args.data - base);
    for (std::uint32_t i = 0; i < m.frames; ++i, at = frame_after(base, at)) {
      const CallHeader h = read_call(base + at);
      Message one{h.handler, h.sender, h.seq, h.hops, Args(m.args.batch, base + at + call_header_bytes, h.args)};
      put_message(w, one);
    }
  }
  types_[object.type]->pack(object.ptr, w);
  types_[object.type]->destroy(object.ptr);
  object.ptr = nullptr;
  const auto id = object.id;
  forward_[id] = dest;
  cache_.erase(id);
  ++routes_version_;
  if (home(id) == rank) {
    auto& entry = directory_[id];
    entry.rank = dest;
    entry.moves = object.moves + 1;
  }
  ++stats.migrated_out;
  if (job_running) {
    object.scheduled = false;
    --scheduled_;
  } else {
    // Its job is still queued on the executor: it finds the object retired and only then stops
    // counting as scheduled (which keeps the runtime alive until it has run).
    object.retired = true;
  }
  auto it = objects.find(id);
  retired_.push_back(std::move(it->second));  // its job is still on the stack, or still to run
  objects.erase(it);
  emit(dest, f);
}

void ObjectsImpl::install(Reader& in, const Batch& batch) {
  auto object = std::make_unique<LocalObject>();
  object->id = in.get<std::uint64_t>();
  object->type = in.get<std::uint32_t>();
  object->moves = in.get<std::uint64_t>();
  object->load = in.get<double>();
  for (auto n = in.get<std::uint64_t>(); n > 0; --n) {
    const auto sender = in.get<std::int32_t>();
    object->expected[sender] = in.get<std::uint64_t>();
  }
  for (auto n = in.get<std::uint64_t>(); n > 0; --n) {
    Message m = get_message(in, batch);
    const auto key = std::make_pair(m.sender, m.seq);
    object->held.emplace(key, std::move(m));
  }
  for (auto n = in.get<std::uint64_t>(); n > 0; --n) enqueue(*object, get_message(in, batch));
  {
    std::shared_lock lock(handlers_mutex_);
    if (object->type >= types_.size())
      throw Error("tessera::dist::Objects: " + object_text(object->id) + " arrived with a type rank " +
                  std::to_string(rank) + " never registered (register the same handlers on every rank)");
    object->ptr = types_[object->type]->unpack(in);
  }
  const auto id = object->id;
  const auto moves = object->moves;
  auto& o = *object;
  objects[id] = std::move(object);
  forward_.erase(id);
  cache_.erase(id);
  ++routes_version_;
  ++stats.migrated_in;
  steal_outstanding_ = false;  // what a thief asked for arrives as a migration like any other
  steal_refusals_ = 0;
  steal_pause_ = {};
  if (home(id) == rank) {
    set_location(id, rank, moves, -1);
  } else {
    emit(home(id), frame(Kind::located, id, static_cast<std::int32_t>(rank), moves));
  }
  schedule(o);
}

void ObjectsImpl::run_object(LocalObject& object) {
  // Messages are taken in runs of up to handler_burst under one lock and run without it; the
  // counters and the object's load are updated once per run. A migration request ends a run.
  std::vector<Message>& run = object.burst;
  for (bool first = true;; first = false) {
    void* ptr = nullptr;
    std::uint32_t type = 0;
    std::size_t calls = 0;
    {
      std::unique_lock lock(mutex);
      // The job ends. A report this makes wakes the progress thread itself (emit). Once
      // scheduled_ may read 0 the runtime may be destroyed: nothing of it is touched after the
      // unlock.
      const auto end_job = [&] {
        --scheduled_;
        maybe_steal();
        maybe_report();
      };
      if (object.retired) return end_job();  // a thief took it while this job waited
      if (closing_ || !error_.empty()) {
        counters_.calls_done += static_cast<std::int64_t>(object.queued_calls);
        object.queue.clear();
        object.queued_calls = 0;
      }
      if (object.queue.empty()) {
        object.scheduled = false;
        return end_job();
      }
      if (!first) {
        lock.unlock();
        executor.schedule(object.job);  // still scheduled: let other objects' handlers run
        return;
      }
      while (!object.queue.empty() && calls < options.handler_burst) {
        if (object.queue.front().handler == migrate_handler) {
          if (!run.empty()) break;
          Message m = std::move(object.queue.front());
          object.queue.pop_front();
          --object.queued_calls;
          ++counters_.calls_done;
          Reader r(m.args.data, m.args.size);
          const int dest = r.get<std::int32_t>();
          if (dest != rank && types_[object.type]->movable) {
            do_migrate(object, dest, true);
            return;
          }
          continue;  // here already, or pinned (a shared buffer, a mailbox): it stays
        }
        // A run is taken whole; what the burst leaves of it is put back below.
        Message& front = object.queue.front();
        object.queued_calls -= front.calls();
        calls += front.calls();
        run.push_back(std::move(front));
        object.queue.pop_front();
      }
      ptr = object.ptr;
      type = object.type;
      object.running = true;
    }
    std::string problem;
    // The handlers are looked up under handlers_mutex_ (when the id changes) and run without a
    // lock: a handler takes `mutex` to send, and send_call takes the two in the other order.
    // (handlers_ is a deque: registering more never moves the entries looked up here.)
    std::uint32_t entry_id = migrate_handler;
    const HandlerEntry* entry = nullptr;
    auto invoke = [&](std::uint32_t id, std::int32_t sender, const std::byte* args, std::size_t bytes) {
      if (id != entry_id) {
        std::shared_lock lock(handlers_mutex_);
        if (id >= handlers_.size()) {
          problem = "handler id " + std::to_string(id) + " is not registered on rank " + std::to_string(rank) +
                    " (every rank must register the same handlers in the same order)";
          return false;
        }
        entry = &handlers_[id];
        entry_id = id;
        if (entry->type != type) {
          problem = "handler '" + entry->name + "' is for another type than " + object_text(object.id);
          return false;
        }
      }
      HandlerContext ctx(self, ObjectName{object.id}, sender);
      Reader in(args, bytes);
      try {
        entry->invoke(ptr, ctx, in);
      } catch (const std::exception& e) {
        problem = "handler '" + entry->name + "' on " + object_text(object.id) + " threw: " + e.what();
        return false;
      } catch (...) {
        problem = "handler '" + entry->name + "' on " + object_text(object.id) + " threw a non-standard exception";
        return false;
      }
      return true;
    };
    const auto start = std::chrono::steady_clock::now();
    std::size_t budget = options.handler_burst;
    std::optional<Message> rest;  // the part of the last run past the burst
    for (Message& m : run) {
      if (m.frames == 0) {
        --budget;
        if (!invoke(m.handler, m.sender, m.args.data, m.args.size)) break;
        continue;
      }
      const std::byte* base = m.args.batch->data();
      std::size_t at = static_cast<std::size_t>(m.args.data - base);
      std::uint32_t i = 0;
      bool ok = true;
      for (; i < m.frames && budget > 0 && ok; ++i, --budget, at = frame_after(base, at)) {
        const CallHeader h = read_call(base + at);
        ok = invoke(h.handler, h.sender, base + at + call_header_bytes, static_cast<std::size_t>(h.args));
      }
      if (!ok) break;
      if (i < m.frames) {
        m.args.data = base + at;
        m.seq += i;
        m.frames -= i;
        rest = std::move(m);
        calls -= rest->frames;
        break;
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard lock(mutex);
    object.running = false;
    if (rest) {
      object.queued_calls += rest->frames;
      object.queue.push_front(std::move(*rest));
    }
    counters_.calls_done += static_cast<std::int64_t>(calls);
    stats.handled += calls;
    object.load += seconds;
    run.clear();
    if (!problem.empty()) fail("rank " + std::to_string(rank) + ": " + problem, true);
  }
}

void ObjectsImpl::maybe_steal() {
  if (!options.steal_work || size < 2 || closing_ || !error_.empty() || !in_wait_ || steal_outstanding_ ||
      scheduled_ != 0 || busy_ != 0)
    return;
  if (steal_refusals_ >= size - 1) {
    if (std::chrono::steady_clock::now() < steal_resume_) return;
    steal_refusals_ = 0;
  }
  const int victim = (rank + 1 + steal_next_++ % (size - 1)) % size;
  steal_outstanding_ = true;
  emit(victim, frame(Kind::steal_request, static_cast<std::int32_t>(rank)));
}

void ObjectsImpl::answer_steal(int thief) {
  // Half of the objects with messages queued go at once (the ones waiting for a worker, most
  // messages first), each with its queue: the thief starts on them while this rank's worker goes
  // on with the rest. Half, as in work-stealing schedulers: one object a request left the thief
  // idle for a round trip per object.
  if (thief == rank || thief < 0 || thief >= size) return;  // not a frame this runtime writes
  std::vector<LocalObject*> waiting;
  std::size_t with_work = 0;
  for (auto& [id, o] : objects) {
    if (id >= reserved_names || o->queued_calls == 0) continue;
    ++with_work;
    if (!o->running && movable(*o)) waiting.push_back(o.get());
  }
  const std::size_t give = std::min(with_work / 2, waiting.size());
  if (give == 0) {
    emit(thief, frame(Kind::steal_refused));
    return;
  }
  std::partial_sort(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(give), waiting.end(),
                    [](const LocalObject* a, const LocalObject* b) {
                      return a->queued_calls > b->queued_calls || (a->queued_calls == b->queued_calls && a->id < b->id);
                    });
  for (std::size_t i = 0; i < give; ++i) do_migrate(*waiting[i], thief, false);
  stats.stolen += give;
}

void ObjectsImpl::fail(std::string message, bool broadcast) {
  if (error_.empty()) {
    error_ = std::move(message);
    error_local_ = !broadcast;
  }
  if (broadcast) {
    error_local_ = false;
    for (int r = 0; r < size; ++r) {
      if (r != rank) emit(r, frame(Kind::abort, error_), false);
    }
    flush();
  }
  waiters_.notify_all();
}

bool ObjectsImpl::idle() const {
  if (scheduled_ != 0 || busy_ != 0) return false;
  for (const auto& box : outbox_)
    if (!box.empty()) return false;
  return true;
}

void ObjectsImpl::maybe_report() {
  if (!probe_pending_ || !in_wait_ || wait_epoch_ != probe_epoch_ || !idle()) return;
  probe_pending_ = false;
  std::vector<std::byte> f;
  Writer w(f);
  w.put(Kind::report);
  w.put(probe_epoch_);
  w.put(probe_wave_);
  put_counters(w, counters_);
  emit(0, f, false);
  flush();
}

void ObjectsImpl::coordinator_receive(const Counters& c) {
  wave_sum_ += c;
  if (++reports_ < size) return;
  wave_open_ = false;
  const Counters sum = wave_sum_;
  const bool stable = previous_valid_ && sum == previous_sum_ && sum.frames_out == sum.frames_in;
  previous_sum_ = sum;
  previous_valid_ = true;
  if (!stable) return;
  if (sum.calls_sent == sum.calls_done) {
    previous_valid_ = false;
    done_epoch_ = wait_epoch_;
    for (int r = 1; r < size; ++r) emit(r, frame(Kind::done, wait_epoch_), false);
    flush();
    waiters_.notify_all();
  } else if (sum.waiting > 0 && sum.calls_sent == sum.calls_done + sum.waiting) {
    // Quiet, and what is left waits for names nobody registered.
    previous_valid_ = false;
    const auto drop = frame(Kind::drop_missing);
    for (int r = 1; r < size; ++r) emit(r, drop);
    Reader in(drop.data(), drop.size());
    process_frame(rank, in, nullptr);
    flush();
  }
}

bool ObjectsImpl::process_received() {
  bool did = false;
  while (!receiving_.empty()) {
    int flag = 0;
    int rc = MPI_SUCCESS;
    {
      std::lock_guard mpi(ci.mpi_mutex);
      rc = MPI_Test(&receiving_.front().request, &flag, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
      // Let go, as the destructor lets go after a failure: MPI may still write into its bytes.
      ReceiveInFlight lost = std::move(receiving_.front());
      receiving_.pop_front();
      new std::shared_ptr<BatchBytes>(std::move(lost.bytes));  // deliberately never freed
      std::lock_guard lock(mutex);
      fail("rank " + std::to_string(rank) + ": receiving messages from rank " + std::to_string(lost.source) +
               " failed (MPI error " + std::to_string(rc) + ")",
           false);
      return did;
    }
    if (!flag) return did;
    const ReceiveInFlight r = std::move(receiving_.front());
    receiving_.pop_front();
    did = true;
    process_batch(r.source, r.bytes);
  }
  return did;
}

bool ObjectsImpl::poll() {
  // A matched batch is received without blocking (MPI_Imrecv): a large one streams only as fast
  // as its sender polls, and MPI_Mrecv spun for it meanwhile, under the MPI lock, in whichever
  // thread polled, a worker or the progress thread (a fifth of a Jacobi3D rank's samples on a
  // busy machine, where the sender polled late).
  bool did = process_received();
  for (int k = 0; k < 64; ++k) {
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    int bytes = 0;
    {
      std::lock_guard mpi(ci.mpi_mutex);
      if (MPI_Improbe(MPI_ANY_SOURCE, objects_tag, channel, &flag, &message, &status) != MPI_SUCCESS || !flag) break;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      auto batch = pooled_buffer();
      batch->resize_for_overwrite(static_cast<std::size_t>(bytes));
      ReceiveInFlight r{MPI_REQUEST_NULL, status.MPI_SOURCE, std::move(batch)};
      MPI_Imrecv(r.bytes->data(), bytes, MPI_BYTE, &message, &r.request);
      receiving_.push_back(std::move(r));
    }
    did = true;
  }
  did = process_received() || did;
  // What follows needs the lock, and a thread sending many small messages holds it most of the
  // time: polls that fought it for every flush slowed it 2-6x. So a poll with nothing received
  // leaves the lock alone when nothing waits to be sent, and also while a sender is still adding
  // to a batch (it sends full ones itself; a later poll sends the rest once it pauses).
  if (!did) {
    if (!attention_.load(std::memory_order_acquire)) return false;
    if (!waiting_.load(std::memory_order_acquire)) {
      const auto stamp = sent_stamp_.load(std::memory_order_relaxed);
      if (polled_stamp_.exchange(stamp, std::memory_order_relaxed) != stamp) return false;
    }
  }
  std::unique_lock lock(mutex, std::try_to_lock);
  if (!lock) return did;
  if (rank == 0 && in_wait_ && done_epoch_ < wait_epoch_ && !wave_open_ && (error_.empty() || error_local_) && idle()) {
    ++wave_;
    wave_open_ = true;
    reports_ = 0;
    wave_sum_ = {};
    for (int r = 1; r < size; ++r) emit(r, frame(Kind::probe, wait_epoch_, wave_), false);
    coordinator_receive(counters_);
    did = true;
  }
  maybe_steal();
  maybe_report();
  flush();
  // Clear once nothing is left to send or to finish sending (all under `mutex`, as is setting).
  attention_.store(in_wait_ || !sending_.empty(), std::memory_order_relaxed);
  return did;
}

void ObjectsImpl::process_batch(int source, const Batch& batch) {
  std::lock_guard lock(mutex);
  RunMemo memo;
  const std::byte* base = batch->data();
  const std::size_t size_of_batch = batch->size();
  auto unreadable = [&](const std::string& why) {
    fail("rank " + std::to_string(rank) + ": a message from rank " + std::to_string(source) +
             " could not be read: " + why,
         true);
  };
  for (std::size_t at = 0; at < size_of_batch;) {
    const std::size_t left = size_of_batch - at;
    if (left < control_payload_at) return unreadable("a frame is cut short");
    const std::uint64_t word = frame_word(base + at);
    if (is_call(word)) {
      const auto bytes = static_cast<std::size_t>(word & call_args_mask);
      if (left < call_header_bytes || bytes > left - call_header_bytes)
        return unreadable("a handler message is cut short");
      const std::size_t next = frame_after(base, at);
      if (!append_to_run(source, base + at, next, batch, memo)) {
        memo = {};  // routing may add, move or remove objects
        const CallHeader h = read_call(base + at);
        if (source != rank) ++counters_.frames_in;
        try {
          route(h.id, Message{h.handler, h.sender, h.seq, h.hops, Args(batch, base + at + call_header_bytes, bytes)});
        } catch (const std::exception& e) {
          unreadable(e.what());
        }
      }
      at = next;
      continue;
    }
    if (word > left - control_payload_at) return unreadable("a frame is cut short");
    const auto length = static_cast<std::size_t>(word);
    memo = {};  // another frame may add, move or remove objects
    Reader frame(base + at + control_payload_at, length);
    try {
      process_frame(source, frame, batch);
    } catch (const std::exception& e) {
      unreadable(e.what());
    }
    at = frame_after(base, at);
  }
}

void ObjectsImpl::process_frame(int source, Reader& in, const Batch& batch) {
  const auto kind = in.get<Kind>();
  if (counted(kind) && source != rank) ++counters_.frames_in;
  switch (kind) {
    case Kind::register_name: {
      const auto id = in.get<std::uint64_t>();
      const auto who = in.get<std::int32_t>();
      auto d = directory_.find(id);
      if (d != directory_.end() && d->second.registered_by >= 0 && d->second.registered_by != who) {
        emit(who, frame(Kind::duplicate, id, static_cast<std::int32_t>(d->second.registered_by)));
      } else {
        set_location(id, who, 0, who);
      }
      break;
    }
    case Kind::located: {
      const auto id = in.get<std::uint64_t>();
      const auto where = in.get<std::int32_t>();
      const auto moves = in.get<std::uint64_t>();
      set_location(id, where, moves, -1);
      break;
    }
    case Kind::migrate:
      install(in, batch);
      break;
    case Kind::hint: {
      const auto id = in.get<std::uint64_t>();
      const auto where = in.get<std::int32_t>();
      if (!objects.count(id) && !forward_.count(id)) {
        cache_[id] = where;
        ++routes_version_;
      }
      break;
    }
    case Kind::duplicate: {
      const auto id = in.get<std::uint64_t>();
      const auto other = in.get<std::int32_t>();
      fail("tessera::dist::Objects::add(" + object_text(id) + ") on rank " + std::to_string(rank) +
               ": that name is already registered by rank " + std::to_string(other),
           false);
      break;
    }
    case Kind::no_such_object: {
      const auto id = in.get<std::uint64_t>();
      const auto handler = in.get<std::uint32_t>();
      std::string name = handler == migrate_handler ? "migrate" : "#" + std::to_string(handler);
      {
        std::shared_lock lock(handlers_mutex_);
        if (handler < handlers_.size()) name = handlers_[handler].name;
      }
      fail("tessera::dist::Objects: rank " + std::to_string(rank) + " sent '" + name + "' to " + object_text(id) +
               ", a name no rank registered",
           false);
      break;
    }
    case Kind::steal_request:
      answer_steal(in.get<std::int32_t>());
      break;
    case Kind::steal_refused: {
      steal_outstanding_ = false;
      if (++steal_refusals_ >= size - 1) {
        // Every rank said no: ask again after a pause, so that ranks with nothing to do let
        // termination detection see them quiet.
        using namespace std::chrono_literals;
        steal_pause_ = std::min(std::max(2 * steal_pause_, std::chrono::microseconds(500)),
                                std::chrono::microseconds(8ms));
        steal_resume_ = std::chrono::steady_clock::now() + steal_pause_;
      }
      maybe_steal();
      break;
    }
    case Kind::probe: {
      probe_epoch_ = in.get<std::uint64_t>();
      probe_wave_ = in.get<std::uint64_t>();
      probe_pending_ = true;
      maybe_report();
      break;
    }
    case Kind::report: {
      const auto epoch = in.get<std::uint64_t>();
      const auto wave = in.get<std::uint64_t>();
      const Counters c = get_counters(in);
      if (rank == 0 && epoch == wait_epoch_ && wave == wave_ && wave_open_) coordinator_receive(c);
      break;
    }
    case Kind::done: {
      done_epoch_ = std::max(done_epoch_, in.get<std::uint64_t>());
      waiters_.notify_all();
      break;
    }
    case Kind::drop_missing: {
      for (auto& [id, messages] : unregistered_) {
        for (auto& m : messages) {
          ++counters_.calls_done;
          const auto f = frame(Kind::no_such_object, id, m.handler);
          if (m.sender == rank) {
            Reader self_in(f.data(), f.size());
            process_frame(rank, self_in, nullptr);
          } else {
            emit(m.sender, f);
          }
        }
        counters_.waiting -= static_cast<std::int64_t>(messages.size());
      }
      unregistered_.clear();
      break;
    }
    case Kind::abort: {
      auto text = in.get<std::string>();
      if (error_.empty() || error_local_) {
        error_ = std::move(text);
        error_local_ = false;
      }
      waiters_.notify_all();
      break;
    }
    default:
      throw Error("unknown frame kind " + std::to_string(static_cast<int>(kind)));
  }
}

void ObjectsImpl::wait() {
  std::unique_lock lock(mutex);
  if (!error_.empty() && !error_local_) throw Error(error_);
  in_wait_ = true;
  waiting_.store(true, std::memory_order_release);
  attention_.store(true, std::memory_order_release);
  const auto epoch = ++wait_epoch_;
  maybe_report();
  lock.unlock();
  ci.wake();
  lock.lock();
  // The progress thread and idle executor workers (the communicator is a ProgressSource) poll,
  // and so drive the termination waves: this thread only sleeps until a wave ends the wait. It
  // used to poll as well, waking about 8000 times a second on each rank and preempting the very
  // handlers it waited for.
  BlockedWorker blocked;  // when called on a worker: it polls nothing while it waits here
  waiters_.wait(lock, [&] { return (!error_.empty() && !error_local_) || done_epoch_ >= epoch; });
  in_wait_ = false;
  waiting_.store(false, std::memory_order_relaxed);
  if (!error_.empty() && !error_local_) throw Error(error_);
  if (!error_.empty()) {
    auto text = std::move(error_);
    error_.clear();
    error_local_ = false;
    throw Error(text);
  }
}

std::size_t ObjectsImpl::rebalance(const BalancePolicy& policy) {
  wait();
  std::vector<std::pair<double, std::uint64_t>> mine;
  double local[2] = {0, 0};
  {
    std::lock_guard lock(mutex);
    for (const auto& [id, o] : objects) {
      if (id >= reserved_names || !movable(*o)) continue;
      mine.emplace_back(o->load, id);
      local[0] += o->load;
    }
    local[1] = static_cast<double>(mine.size());
  }
  std::vector<double> all(2 * static_cast<std::size_t>(size));
  auto state = make_request_state();
  state->label = "the load exchange of Objects::rebalance";
  {
    std::lock_guard mpi(ci.mpi_mutex);
    check_mpi(MPI_Iallgather(local, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, channel, &state->request), *state);
  }
  ci.track(state).wait();
  // Loads by handler time; by object count when nothing has run yet.
  double total = 0;
  for (int r = 0; r < size; ++r) total += all[2 * static_cast<std::size_t>(r)];
  const bool by_count = total <= 0;
  std::vector<double> load(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    load[static_cast<std::size_t>(r)] = all[2 * static_cast<std::size_t>(r) + (by_count ? 1 : 0)];
  if (by_count) {
    total = std::accumulate(load.begin(), load.end(), 0.0);
    for (auto& [l, id] : mine) l = 1;
  }
  // This rank's (destination, load to send), from loads every rank sees alike.
  const std::vector<std::pair<int, double>> plan = policy(rank, std::span<const double>(load));
  for (const auto& [dest, amount] : plan)
    if (dest < 0 || dest >= size || dest == rank || !(amount >= 0))
      throw Error("tessera::dist::Objects::rebalance: the balance policy sent load " + std::to_string(amount) +
                  " from rank " + std::to_string(rank) + " to rank " + std::to_string(dest) +
                  "; a policy sends non-negative load to other ranks of the " + std::to_string(size));
  std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::size_t moved = 0;
  std::vector<bool> taken(mine.size(), false);
  for (auto [dest, amount] : plan) {
    for (std::size_t i = 0; i < mine.size() && amount > 0; ++i) {
      // Send an object when that brings the destination closer to the mean than keeping it.
      if (taken[i] || mine[i].first > amount * 1.5 || mine[i].first <= 0) continue;
      taken[i] = true;
      amount -= mine[i].first;
      migrate(mine[i].second, dest);
      ++moved;
    }
  }
  wait();
  std::lock_guard lock(mutex);
  for (auto& [id, o] : objects) o->load = 0;
  return moved;
}

void ObjectsImpl::busy_begin() {
  std::lock_guard lock(mutex);
  ++busy_;
}

void ObjectsImpl::busy_end() {
  std::unique_lock lock(mutex);
  --busy_;
  maybe_report();
}

void ObjectsImpl::finish_put(std::uint64_t ticket, const std::string& error) {
  auto promise = take_reply(put_promises, ticket);
  if (!promise) return;
  if (error.empty())
    promise->set_value();
  else
    promise->set_exception(std::make_exception_ptr(Error("tessera::dist::Objects::" + error)));
}

void ObjectsImpl::finish_get(std::uint64_t ticket, const std::string& error, std::span<const std::byte> bytes) {
  auto promise = take_reply(get_promises, ticket);
  if (!promise) return;
  if (error.empty())
    promise->set_value(std::vector<std::byte>(bytes.begin(), bytes.end()));
  else
    promise->set_exception(std::make_exception_ptr(Error("tessera::dist::Objects::" + error)));
}

}  // namespace detail

int HandlerContext::rank() const noexcept { return objects_->rank(); }

void Busy::release() noexcept {
  if (impl_) std::exchange(impl_, nullptr)->busy_end();
}

Objects::Objects(Communicator& comm, ObjectsOptions options)
    : impl_(std::make_unique<detail::ObjectsImpl>(*this, comm, options)) {
  register_put_get();
}

namespace {

std::string rows_text(RowRange rows) {
  return "rows [" + std::to_string(rows.begin) + ", " + std::to_string(rows.end) + ")";
}

// The target side of put and get: "" when done, else what was wrong.
std::string check_rows(const Buffer& buffer, RowRange rows) {
  if (rows.begin >= rows.end || rows.end > buffer.rows())
    return rows_text(rows) + " of buffer '" + buffer.name() + "', which has rows [0, " + std::to_string(buffer.rows()) +
           ")";
  return {};
}

std::string write_rows(Buffer& buffer, RowRange rows, std::span<const std::byte> bytes) {
  if (auto bad = check_rows(buffer, rows); !bad.empty()) return "put to " + bad;
  if (bytes.size() != rows.size() * buffer.row_bytes())
    return "put of " + std::to_string(bytes.size()) + " B to " + rows_text(rows) + " of buffer '" + buffer.name() +
           "', which hold " + std::to_string(rows.size() * buffer.row_bytes()) + " B";
  try {
    auto* base = static_cast<std::byte*>(buffer.request(Access::write, rows).get());
    std::memcpy(base + rows.begin * buffer.row_bytes(), bytes.data(), bytes.size());
    buffer.release(Access::write, rows);
  } catch (const std::exception& e) {
    return std::string("put to buffer '") + buffer.name() + "': " + e.what();
  }
  return {};
}

std::string read_rows(Buffer& buffer, RowRange rows, std::vector<std::byte>& out) {
  if (auto bad = check_rows(buffer, rows); !bad.empty()) return "get of " + bad;
  try {
    const auto* base = static_cast<const std::byte*>(buffer.request(Access::read, rows).get());
    out.assign(base + rows.begin * buffer.row_bytes(), base + rows.end * buffer.row_bytes());
    buffer.release(Access::read, rows);
  } catch (const std::exception& e) {
    return std::string("get from buffer '") + buffer.name() + "': " + e.what();
  }
  return {};
}

void refuse_reserved(ObjectName name, const char* what) {
  if (name.id >= detail::reserved_names)
    throw Error(std::string("tessera::dist::Objects::") + what + "(object " + std::to_string(name.id) +
                "): names from 2^63 up are tessera's own");
}

}  // namespace

void Objects::register_put_get() {
  using detail::Mailbox;
  using detail::SharedRows;
  auto* impl = impl_.get();
  const auto done = handler<Mailbox, std::uint64_t, std::string>(
      "tessera.put-done", [impl](Mailbox&, HandlerContext&, std::uint64_t ticket, const std::string& error) {
        impl->finish_put(ticket, error);
      });
  const auto data = handler<Mailbox, std::uint64_t, std::string, std::span<const std::byte>>(
      "tessera.get-data", [impl](Mailbox&, HandlerContext&, std::uint64_t ticket, const std::string& error,
                                 std::span<const std::byte> bytes) { impl->finish_get(ticket, error, bytes); });
  const auto put_rows = handler<SharedRows, std::uint64_t, std::uint64_t, std::uint64_t, std::span<const std::byte>>(
      "tessera.put", [done](SharedRows& s, HandlerContext& ctx, std::uint64_t begin, std::uint64_t end,
                            std::uint64_t ticket, std::span<const std::byte> bytes) {
        const std::string error = write_rows(*s.buffer, {begin, end}, bytes);
        ctx.objects().send(ObjectName{detail::mailbox_of(ctx.source_rank())}, done, ticket, error);
      });
  const auto get_rows = handler<SharedRows, std::uint64_t, std::uint64_t, std::uint64_t>(
      "tessera.get",
      [data](SharedRows& s, HandlerContext& ctx, std::uint64_t begin, std::uint64_t end, std::uint64_t ticket) {
        std::vector<std::byte> bytes;
        const std::string error = read_rows(*s.buffer, {begin, end}, bytes);
        ctx.objects().send(ObjectName{detail::mailbox_of(ctx.source_rank())}, data, ticket, error,
                           std::span<const std::byte>(bytes));
      });
  impl_->put_handler = put_rows.id();
  impl_->get_handler = get_rows.id();
  add(ObjectName{detail::mailbox_of(impl_->rank)}, Mailbox{});
}

void Objects::share(ObjectName name, Buffer& buffer) {
  refuse_reserved(name, "share");
  add(name, detail::SharedRows{&buffer});
}

namespace {
// put and get: a ticket whose promise waits for the owner's reply, and the request (the rows, the
// ticket, then what `more` writes) sent to `name`'s handler; a request that cannot be sent gives
// its ticket up.
template <typename T, typename Send, typename More>
std::future<T> request_rows(detail::ObjectsImpl& impl, std::unordered_map<std::uint64_t, std::promise<T>>& promises,
                            RowRange rows, Send&& send, More&& more) {
  std::promise<T> promise;
  auto future = promise.get_future();
  const std::uint64_t ticket = impl.await_reply(promises, std::move(promise));
  std::vector<std::byte> args;
  Writer w(args);
  w.put<std::uint64_t>(rows.begin);
  w.put<std::uint64_t>(rows.end);
  w.put(ticket);
  more(w);
  try {
    send(std::move(args));
  } catch (...) {
    impl.take_reply(promises, ticket);
    throw;
  }
  return future;
}
}  // namespace

std::future<void> Objects::put(ObjectName name, RowRange rows, std::span<const std::byte> data) {
  refuse_reserved(name, "put");
  return request_rows(
      *impl_, impl_->put_promises, rows,
      [&](std::vector<std::byte> args) { send_bytes(name, impl_->put_handler, std::move(args)); },
      [&](Writer& w) { w.put(data); });
}

std::future<std::vector<std::byte>> Objects::get(ObjectName name, RowRange rows) {
  refuse_reserved(name, "get");
  return request_rows(
      *impl_, impl_->get_promises, rows,
      [&](std::vector<std::byte> args) { send_bytes(name, impl_->get_handler, std::move(args)); }, [](Writer&) {});
}

Objects::~Objects() = default;

std::uint32_t Objects::register_handler(std::string name, const TypeOps* type, Invoke invoke) {
  return impl_->register_handler(std::move(name), type, std::move(invoke));
}

void Objects::add_object(ObjectName name, const TypeOps* type, void* object) {
  impl_->add_object(name.id, type, object);
}

void Objects::send_bytes(ObjectName to, std::uint32_t handler, std::vector<std::byte> args) {
  impl_->send_call(to.id, handler, std::move(args));
}

void Objects::send_view(ObjectName to, std::uint32_t handler, const std::byte* args, std::size_t bytes) {
  impl_->send_call(to.id, handler, args, bytes);
}

void Objects::migrate(ObjectName name, int rank) { impl_->migrate(name.id, rank); }

void Objects::wait() { impl_->wait(); }

std::size_t Objects::rebalance(const BalancePolicy& policy) {
  if (!policy) throw Error("tessera::dist::Objects::rebalance: the balance policy is empty");
  return impl_->rebalance(policy);
}

BalancePolicy greedy_balance() {
  return [](int rank, std::span<const double> load) {
    const double mean = std::accumulate(load.begin(), load.end(), 0.0) / static_cast<double>(load.size());
    std::vector<double> surplus(load.size());
    for (std::size_t r = 0; r < load.size(); ++r) surplus[r] = load[r] - mean;
    std::vector<std::pair<int, double>> plan;
    for (std::size_t from = 0, to = 0; from < surplus.size(); ++from) {
      while (surplus[from] > 0) {
        while (to < surplus.size() && surplus[to] >= 0) ++to;
        if (to == surplus.size()) break;
        const double amount = std::min(surplus[from], -surplus[to]);
        if (static_cast<int>(from) == rank) plan.emplace_back(static_cast<int>(to), amount);
        surplus[from] -= amount;
        surplus[to] += amount;
      }
    }
    return plan;
  };
}

BalancePolicy diffusion_balance(double rate) {
  if (!(rate > 0 && rate <= 1))
    throw Error("tessera::dist::diffusion_balance: rate " + std::to_string(rate) +
                " is outside (0, 1]; it is the share of the difference sent to a neighbour per round");
  return [rate](int rank, std::span<const double> load) {
    const int n = static_cast<int>(load.size());
    std::vector<std::pair<int, double>> plan;
    // With two ranks each has one neighbour and sends half the difference; on a ring of more,
    // a third to each lower neighbour, so no rank gives away more than it has over them.
    const std::vector<int> neighbours = n < 2    ? std::vector<int>{}
                                        : n == 2 ? std::vector<int>{1 - rank}
                                                 : std::vector<int>{(rank + n - 1) % n, (rank + 1) % n};
    const double share = n == 2 ? 0.5 : 1.0 / 3.0;
    for (int to : neighbours) {
      const double diff = load[static_cast<std::size_t>(rank)] - load[static_cast<std::size_t>(to)];
      if (diff > 0) plan.emplace_back(to, rate * share * diff);
    }
    return plan;
  };
}

bool Objects::is_local(ObjectName name) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->objects.count(name.id) != 0;
}

void* Objects::local_object(ObjectName name, const std::type_info& type) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->objects.find(name.id);
  if (it == impl_->objects.end())
    throw Error("tessera::dist::Objects::local(object " + std::to_string(name.id) + "): it does not live on rank " +
                std::to_string(impl_->rank));
  if (impl_->type_of(*it->second) != type)
    throw Error("tessera::dist::Objects::local(object " + std::to_string(name.id) + "): it is a " +
                impl_->type_of(*it->second).name() + ", not a " + type.name());
  return it->second->ptr;
}

std::vector<ObjectName> Objects::local_names() const {
  std::vector<ObjectName> names;
  {
    std::lock_guard lock(impl_->mutex);
    for (const auto& [id, o] : impl_->objects)
      if (id < detail::reserved_names) names.push_back({id});
  }
  std::sort(names.begin(), names.end(), [](ObjectName a, ObjectName b) { return a.id < b.id; });
  return names;
}

Busy Objects::busy() {
  impl_->busy_begin();
  return Busy(impl_.get());
}

ObjectsStatistics Objects::statistics() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

Communicator& Objects::communicator() noexcept { return impl_->comm; }
int Objects::rank() const noexcept { return impl_->rank; }

}  // namespace tessera::dist
