#pragma once
// Communicator: tessera's handle on MPI. It initialises MPI with the thread level tessera needs
// (or joins a program that already did), works on its own duplicate of MPI_COMM_WORLD so the
// program's own MPI traffic never matches tessera's, and owns the progress engine that completes
// non-blocking operations without a core spinning while nothing happens.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "tessera/core/ranks.hpp"
#include "tessera/sched/executor.hpp"

namespace tessera {
class Buffer;
class NodeGraph;
class Node;
struct RowRange;
}  // namespace tessera

namespace tessera::dist {

namespace detail {
class CommunicatorImpl;
struct RequestState;
}  // namespace detail

struct CommunicatorOptions {
  /// How long a thread waiting on a request (and the progress thread after its last completion)
  /// polls MPI before it sleeps. Polling is what makes a small message cost microseconds; the
  /// bound is what keeps 2 ranks on 2 cores from halving each other's speed.
  /// TESSERA_DIST_SPIN_US overrides it.
  std::chrono::microseconds spin{200};
  /// The longest sleep between polls once idle: the worst added latency of a message that
  /// arrives after a quiet spell. TESSERA_DIST_SLEEP_US overrides it.
  std::chrono::microseconds max_sleep{200};
};

/// A non-blocking operation's completion. `wait()` polls MPI from the calling thread for the
/// spin window, then sleeps until the progress thread completes it; `then` runs a callback on
/// completion (on the progress thread, or at once when already complete).
class Request {
 public:
  Request() = default;
  Request(const Request&) = default;
  Request& operator=(const Request&) = default;
  Request(Request&&) noexcept = default;
  Request& operator=(Request&&) noexcept = default;
  /// A request nobody waited for still completes (the progress engine takes it over).
  ~Request();
  bool valid() const noexcept { return state_ != nullptr; }
  /// Whether it has completed (successfully or not). Never blocks.
  bool ready() const;
  /// Blocks until complete; throws the operation's tessera::Error if it failed.
  void wait() const;
  /// The number of bytes a receive got (0 for sends).
  std::size_t bytes() const;

 private:
  friend class detail::CommunicatorImpl;
  friend class Communicator;
  explicit Request(std::shared_ptr<detail::RequestState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::RequestState> state_;
};

/// Rank, size, point-to-point messages of bytes, trivially copyable values and Buffer rows, and
/// communication nodes for NodeGraphs. One per process is usual; several share one MPI.
///
///   tessera::dist::Communicator comm(&argc, &argv);
///   std::vector<double> face(n);
///   if (comm.rank() == 0) comm.send(std::span<const double>(face), 1, /*tag*/ 7).wait();
///   if (comm.rank() == 1) comm.recv(std::span<double>(face), 0, 7).wait();
class Communicator : public tessera::Ranks {
 public:
  /// Initialises MPI if the program has not (asking for MPI_THREAD_MULTIPLE), else joins it.
  /// Throws tessera::Error when MPI was already finalised, or was initialised with a thread level
  /// below MPI_THREAD_SERIALIZED (tessera's progress thread calls MPI).
  explicit Communicator(int* argc = nullptr, char*** argv = nullptr, CommunicatorOptions options = {});
  /// Waits for this communicator's outstanding operations, stops its progress thread and, when it
  /// was the last communicator and tessera initialised MPI, finalises MPI.
  ~Communicator() override;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const noexcept override;
  int size() const noexcept override;
  /// tessera::Ranks: the messages of distributed tensors and graphs, on tags above the user's.
  void post_send(const void* data, std::size_t bytes, int dest, std::uint64_t channel, Done done) override;
  void post_recv(void* data, std::size_t bytes, int source, std::uint64_t channel, Done done) override;
  /// Prints "tessera::dist: rank R failed: <what>" and ends every rank (MPI_Abort): the other
  /// ranks are waiting for messages this rank will not send.
  [[noreturn]] void fail(const std::string& what) noexcept override;
  /// How many ranks share this rank's node (MPI_COMM_TYPE_SHARED): what a rank's thread pool is
  /// sized by, so ranks on one node do not take each other's cores.
  int ranks_on_node() const noexcept;
  /// The cores this rank may use: the hardware threads divided among the node's ranks (at least 1).
  unsigned cores_per_rank() const noexcept;
  /// An executor's workers for this rank's share of the node: cores_per_rank() in all, one of
  /// them GPU-priority (it drives the rank's devices and runs CPU work too). An Executor with
  /// default options takes every core of the node, on each rank: with 2 ranks on 2 cores, four
  /// busy workers.
  ///
  ///   tessera::Executor executor(comm.executor_options());
  ExecutorOptions executor_options() const noexcept;
  /// Whether MPI can read and write GPU memory directly (OpenMPI's MPIX_Query_cuda_support, at
  /// run time). When not, device data travels through pinned host memory.
  bool cuda_aware() const noexcept;
  /// The MPI library's version string, for reports.
  std::string library_version() const;

  /// Non-blocking send of raw bytes to `dest` with `tag` (0 <= tag < 2^20; tags at or above are
  /// tessera's own). The bytes must stay untouched until the request completes.
  Request send_bytes(const void* data, std::size_t bytes, int dest, int tag);
  /// Non-blocking receive of at most `capacity` bytes; `source` may be any_source.
  Request recv_bytes(void* data, std::size_t capacity, int source, int tag);

  template <class T>
  Request send(std::span<const T> values, int dest, int tag) {
    static_assert(std::is_trivially_copyable_v<T>, "messages carry trivially copyable values");
    return send_bytes(values.data(), values.size_bytes(), dest, tag);
  }
  template <class T>
  Request recv(std::span<T> values, int source, int tag) {
    static_assert(std::is_trivially_copyable_v<T>, "messages carry trivially copyable values");
    return recv_bytes(values.data(), values.size_bytes(), source, tag);
  }

  /// Sends rows of a Buffer: the memory layer brings them to the host (from whichever device
  /// holds them) and holds them for reading until the send completes.
  Request send(Buffer& buffer, RowRange rows, int dest, int tag);
  /// Receives rows of a Buffer into its host replica, which becomes the only valid one for them.
  Request recv(Buffer& buffer, RowRange rows, int source, int tag);

  /// A node of `graph` that sends `bytes` bytes at `data` when it runs and completes when MPI
  /// has, holding no worker meanwhile.
  Node& send_node(NodeGraph& graph, const void* data, std::size_t bytes, int dest, int tag);
  /// A node of `graph` that receives into `data` and completes when the message has arrived.
  Node& recv_node(NodeGraph& graph, void* data, std::size_t bytes, int source, int tag);

  /// Blocks until every rank has called it (driving progress meanwhile, without spinning).
  void barrier();

  enum class Reduce { sum, min, max };
  /// Collective: `value` combined over every rank, on every rank. min and max are exact; a sum
  /// of doubles is MPI's, whose order may depend on the number of ranks.
  double all_reduce(double value, Reduce op);
  std::int64_t all_reduce(std::int64_t value, Reduce op);

  static constexpr int any_source = -1;
  static constexpr int max_user_tag = (1 << 20) - 1;

  detail::CommunicatorImpl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<detail::CommunicatorImpl> impl_;
};

}  // namespace tessera::dist
