#pragma once
// Mobile objects (PREMA's distributed layer): objects with a global name that stays valid when
// they move between ranks; handlers invoked on them wherever they live (remote method
// invocation); migration with messages in flight forwarded and delivered exactly once, in send
// order per sending rank; termination detection ("every message everywhere handled"); and
// load balancing by over-decomposition.

#include <tessera/dist/communicator.hpp>
#include <tessera/dist/wire.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tessera {
class Executor;
class Buffer;
}  // namespace tessera

namespace tessera::dist {

namespace detail {
class ObjectsImpl;
}

/// A mobile object's global name: any 64-bit number, unique across ranks. Its home rank
/// (id mod ranks) keeps the directory entry that says where the object is.
struct ObjectName {
  std::uint64_t id = 0;
  constexpr bool operator==(const ObjectName&) const = default;
};

class Objects;

/// What a running handler knows about its call.
class HandlerContext {
 public:
  Objects& objects() const noexcept { return *objects_; }
  /// The object the handler runs on.
  ObjectName self() const noexcept { return self_; }
  /// The rank that sent the message.
  int source_rank() const noexcept { return source_; }
  /// The rank the handler runs on.
  int rank() const noexcept;

 private:
  friend class detail::ObjectsImpl;
  HandlerContext(Objects& o, ObjectName self, int source) : objects_(&o), self_(self), source_(source) {}
  Objects* objects_;
  ObjectName self_;
  int source_;
};

/// Keeps `Objects::wait()` from returning while work started by a handler (a task on a device,
/// say) may still send messages. Release it (or let it go out of scope) when that work is done.
class Busy {
 public:
  Busy() = default;
  Busy(Busy&& o) noexcept : impl_(std::exchange(o.impl_, nullptr)) {}
  Busy& operator=(Busy&& o) noexcept {
    if (this != &o) {
      release();
      impl_ = std::exchange(o.impl_, nullptr);
    }
    return *this;
  }
  ~Busy() { release(); }
  void release() noexcept;

 private:
  friend class Objects;
  explicit Busy(detail::ObjectsImpl* impl) : impl_(impl) {}
  detail::ObjectsImpl* impl_ = nullptr;
};

/// A registered handler of objects of type T taking Args.
template <class T, class... Args>
class Handler {
 public:
  std::uint32_t id() const noexcept { return id_; }

 private:
  friend class Objects;
  explicit Handler(std::uint32_t id) : id_(id) {}
  std::uint32_t id_;
};

struct ObjectsOptions {
  /// Whose workers run the handlers. Null: a pool of the runtime's own with
  /// Communicator::cores_per_rank() workers, so that ranks sharing a node (2 ranks on 2 cores)
  /// do not each start a worker per core and time-slice each other.
  Executor* executor = nullptr;
  /// Messages to one rank are sent together once this many bytes are waiting (more wait for the
  /// next progress step): aggregation is what makes small messages cheap.
  std::size_t batch_bytes = 64 * 1024;
  /// Messages one object handles before its worker lets other objects run.
  std::size_t handler_burst = 64;
  /// Work stealing between ranks (PREMA's implicit load balancing): a rank with nothing to run
  /// while it is in wait() asks the other ranks in turn for work, and a rank with objects whose
  /// messages wait sends it half of them (those not running now, most messages first), each with
  /// its messages. After every rank has said no, it asks again after a pause (0.5 ms doubling to
  /// 8 ms). Off by default: an object moves with all its state, which pays when handlers are
  /// long and the load uneven.
  bool steal_work = false;
};

/// Counters of this rank, for tests and reports.
struct ObjectsStatistics {
  std::uint64_t sent = 0;       // handler messages sent from this rank
  std::uint64_t handled = 0;    // handler messages run on this rank
  std::uint64_t forwarded = 0;  // messages passed on because their object had moved
  std::uint64_t migrated_in = 0;
  std::uint64_t migrated_out = 0;
  std::uint64_t batches = 0;  // MPI messages that carried them
  std::uint64_t stolen = 0;   // objects other ranks took from this one (ObjectsOptions::steal_work)
};

/// A load-balancing policy for Objects::rebalance: given every rank's load (the same on every
/// rank) and this rank's number, the load this rank sends to which ranks. Pure and deterministic,
/// so that every rank, computing from the same loads, agrees on the whole plan.
using BalancePolicy = std::function<std::vector<std::pair<int, double>>(int rank, std::span<const double> loads)>;

/// Every rank above the mean sends its surplus to the ranks below it, in rank order: the fewest
/// moves that level the load in one round (global knowledge, any rank to any rank).
BalancePolicy greedy_balance();
/// Diffusion: each rank sends `rate` times a share of the difference to each ring neighbour
/// (rank - 1, rank + 1) that has less load; repeated rounds level the load with neighbour traffic
/// only (Cybenko's diffusion), the choice that keeps neighbouring objects near each other.
BalancePolicy diffusion_balance(double rate = 1.0);

/// The mobile-object runtime of one rank. Every rank makes one over the same Communicator and
/// registers the same handlers in the same order.
///
///   struct Counter { long count = 0; };
///   tessera::dist::Objects objects(comm);
///   auto bump = objects.handler<Counter, long>("bump", [](Counter& c, tessera::dist::HandlerContext&, long by) {
///     c.count += by;
///   });
///   if (comm.rank() == 0) objects.add(tessera::dist::ObjectName{7}, Counter{});
///   objects.send(tessera::dist::ObjectName{7}, bump, 5L);  // from every rank
///   objects.wait();  // every message handled, wherever object 7 lives
class Objects {
 public:
  explicit Objects(Communicator& comm, ObjectsOptions options = {});
  /// Collective. Waits until every message sent between ranks has arrived (so nothing is left
  /// in flight for MPI_Finalize), then stops.
  ~Objects();
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;

  /// Registers a handler `f(T&, HandlerContext&, Args...)` under `name`. Collective in effect:
  /// every rank registers the same handlers in the same order (the id is the order).
  template <class T, class... Args, class F>
  Handler<T, Args...> handler(std::string name, F&& f) {
    static_assert(std::is_invocable_v<F&, T&, HandlerContext&, Args...>,
                  "a handler is called as f(T& object, HandlerContext& ctx, Args... args)");
    auto invoke = [fn = std::forward<F>(f)](void* object, HandlerContext& ctx, Reader& in) mutable {
      std::tuple<Args...> args{in.get<Args>()...};
      std::apply([&](auto&... a) { fn(*static_cast<T*>(object), ctx, a...); }, args);
    };
    return Handler<T, Args...>(register_handler(std::move(name), type_ops<T>(), std::move(invoke)));
  }

  /// Makes `object` a mobile object named `name`, living on this rank for now. A type needs a
  /// handler registered before its first object. A name used twice anywhere is a
  /// tessera::Error (here at once, or on this rank from wait() when the other is elsewhere).
  template <class T>
  void add(ObjectName name, T object) {
    add_object(name, type_ops<T>(), new T(std::move(object)));
  }

  /// Runs `h` on the object called `to` with `args`, wherever it lives. From any thread, inside
  /// handlers too. Messages from one rank to one object run in the order they were sent.
  template <class T, class... Args, class... Given>
  void send(ObjectName to, const Handler<T, Args...>& h, Given&&... args) {
    static_assert(sizeof...(Given) == sizeof...(Args), "send: the handler takes a different number of arguments");
    if constexpr ((fixed_size<Args>() && ...)) {
      // Arguments of a size known here are laid out as Writer would (back to back, unpadded) on
      // the stack: the hot path of small messages then allocates nothing.
      std::array<std::byte, (sizeof(Args) + ... + 0)> bytes;
      std::size_t at = 0;
      ((std::memcpy(bytes.data() + at, &static_cast<const Args&>(args), sizeof(Args)), at += sizeof(Args)), ...);
      send_view(to, h.id(), bytes.data(), bytes.size());
    } else {
      std::vector<std::byte> bytes;
      Writer w(bytes);
      (w.put(static_cast<const Args&>(args)), ...);
      send_bytes(to, h.id(), std::move(bytes));
    }
  }

  /// Moves the object to `rank` after the messages this rank sent it before the call. From any
  /// rank; the object's name stays valid and messages follow it.
  void migrate(ObjectName name, int rank);

  /// Collective: returns when every handler message sent anywhere has been handled and no
  /// object is moving (termination detection), or throws the first error: a handler that threw
  /// (on every rank, naming the rank, handler and object), a message to a name that no rank
  /// registered (on the sender's rank), a name registered twice.
  void wait();

  /// Collective: gathers every rank's movable load (handler seconds since the last rebalance, or
  /// the number of objects when nothing ran), asks `policy` how much load this rank sends where,
  /// moves its heaviest fitting objects accordingly, then waits. Returns the number of objects
  /// this rank sent away.
  ///
  ///   objects.rebalance();                                   // every surplus to the deficits
  ///   objects.rebalance(tessera::dist::diffusion_balance()); // only to ring neighbours
  std::size_t rebalance(const BalancePolicy& policy = greedy_balance());

  /// Makes the rows of `buffer` writable and readable from every rank under `name` (PREMA's
  /// global pointer to a hetero_object). The buffer stays on this rank and must outlive this
  /// Objects; its rows are reached through the memory layer, on whichever device holds them.
  void share(ObjectName name, Buffer& buffer);
  /// Writes `data` into `rows` of the buffer shared as `name`, wherever it is (PREMA's put). The
  /// future is ready once the rows are written there, or holds the tessera::Error the target
  /// found (rows out of range, a size that is not the rows'). From any thread, handlers too.
  std::future<void> put(ObjectName name, RowRange rows, std::span<const std::byte> data);
  /// Reads `rows` of the buffer shared as `name` (PREMA's get).
  std::future<std::vector<std::byte>> get(ObjectName name, RowRange rows);

  /// Whether the object lives on this rank now.
  bool is_local(ObjectName name) const;
  /// The object, when it lives here. Use between wait() and the next sends.
  template <class T>
  T& local(ObjectName name) {
    return *static_cast<T*>(local_object(name, typeid(T)));
  }
  /// Names of the objects living here, in ascending order.
  std::vector<ObjectName> local_names() const;

  /// Holds off termination while work a handler started may still send messages.
  Busy busy();

  ObjectsStatistics statistics() const;
  Communicator& communicator() noexcept;
  int rank() const noexcept;

  /// Per-type operations the runtime needs to move objects it does not know.
  struct TypeOps {
    const std::type_info* type;
    void (*pack)(const void*, Writer&);
    void* (*unpack)(Reader&);
    void (*destroy)(void*);
    bool movable;  // false for a type with `static constexpr bool pinned = true`: it never migrates
  };

 private:
  template <class T>
  static const TypeOps* type_ops() {
    static const TypeOps ops{&typeid(T), [](const void* p, Writer& w) { w.put(*static_cast<const T*>(p)); },
                             [](Reader& r) -> void* { return new T(r.get<T>()); },
                             [](void* p) { delete static_cast<T*>(p); }, !pinned<T>()};
    return &ops;
  }
  // Whether Writer stores a T as its sizeof(T) bytes.
  template <class T>
  static constexpr bool fixed_size() {
    return std::is_trivially_copyable_v<T> && !SelfPacking<T> && !detail::is_span<T>::value;
  }
  template <class T>
  static constexpr bool pinned() {
    if constexpr (requires { T::pinned; })
      return T::pinned;
    else
      return false;
  }
  void register_put_get();

  using Invoke = std::function<void(void*, HandlerContext&, Reader&)>;
  std::uint32_t register_handler(std::string name, const TypeOps* type, Invoke invoke);
  void add_object(ObjectName name, const TypeOps* type, void* object);  // owns `object`, also on error
  void send_bytes(ObjectName to, std::uint32_t handler, std::vector<std::byte> args);
  void send_view(ObjectName to, std::uint32_t handler, const std::byte* args, std::size_t size);
  void* local_object(ObjectName name, const std::type_info& type);

  std::unique_ptr<detail::ObjectsImpl> impl_;
};

}  // namespace tessera::dist
