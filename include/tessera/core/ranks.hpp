#pragma once
// Ranks: what the tensor and graph layers need from a message layer to spread one tensor over
// the ranks of a distributed run: who this rank is, non-blocking byte messages on numbered
// channels, and a sequence of channel numbers that every rank draws in the same order. The
// distribution layer (tessera::dist::Communicator) implements it over MPI; tensors and graphs
// never see MPI, so programs that do not distribute never link it.
//
//   tessera::dist::Communicator comm(&argc, &argv);      // a tessera::Ranks
//   tessera::TensorOptions<2> o;
//   o.ranks = &comm;                                      // this tensor is spread over comm's ranks
//   tessera::Tensor<double, 2> u(memory, {4096, 4096}, o.with_padding(1));

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace tessera {

class Ranks {
 public:
  /// Called once when a message has completed: with nullptr, or with the error that ended it.
  using Done = std::function<void(std::exception_ptr)>;

  virtual ~Ranks() = default;

  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;

  /// Starts sending `bytes` bytes at `data` to rank `dest` on `channel`; the bytes stay untouched
  /// until `done` runs (on any thread, possibly before this returns). Messages between two ranks
  /// on one channel arrive in the order they were sent.
  virtual void post_send(const void* data, std::size_t bytes, int dest, std::uint64_t channel, Done done) = 0;
  /// Starts receiving exactly `bytes` bytes from rank `source` on `channel` into `data`; a message
  /// of another size completes `done` with a tessera::Error.
  virtual void post_recv(void* data, std::size_t bytes, int source, std::uint64_t channel, Done done) = 0;

  /// The next channel number. Every rank must draw channels in the same order (declaring the
  /// same distributed tensors and building the same graphs in the same order does), so that
  /// the n-th channel of one rank is the n-th of every other.
  std::uint64_t next_channel() noexcept { return next_channel_++; }

  /// This rank failed in the middle of work whose messages the other ranks wait for (a graph
  /// over distributed tensors whose run threw): they would wait forever, so the implementation
  /// ends the run on every rank, saying which rank failed and why. Does not return.
  [[noreturn]] virtual void fail(const std::string& what) noexcept = 0;

 private:
  std::uint64_t next_channel_ = 0;
};

/// Blocks until every message started with `post` has completed; rethrows the first error.
/// `post(done)` is called `count` times with a completion to hand to post_send/post_recv.
///
///   tessera::wait_for_messages(2, [&](tessera::Ranks::Done d, std::size_t k) { ... });
void wait_for_messages(std::size_t count, const std::function<void(Ranks::Done, std::size_t)>& post);

}  // namespace tessera

namespace tessera {

/// Collective over every rank of `ranks`: rank k's `bytes` bytes at `mine` land at
/// `all + k * bytes` on every rank. Blocks (without spinning) until done.
///
///   std::vector<double> every(ranks.size());
///   tessera::all_gather(ranks, channel, &mine, sizeof mine, every.data());
void all_gather(Ranks& ranks, std::uint64_t channel, const void* mine, std::size_t bytes, void* all);

/// As all_gather, without blocking: `done` runs once every rank's bytes are in `all` (or with
/// the first error). `mine` and `all` stay valid until then.
void post_all_gather(Ranks& ranks, std::uint64_t channel, const void* mine, std::size_t bytes, void* all,
                     Ranks::Done done);

}  // namespace tessera
