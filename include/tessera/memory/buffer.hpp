#pragma once
// tessera::Buffer: one logical array of rows with a replica per memory space (host, each
// device), validity per replica down to row sub-ranges, and copies made lazily and
// asynchronously from declared accesses (PREMA's coherent data objects, §3.1.4).

#include <tessera/memory/access.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <cstddef>
#include <future>
#include <memory>
#include <string>

namespace tessera {

class Stream;

namespace detail {
class BufferState;
}

/// `rows` rows of `row_bytes` bytes each. Rows are the unit of validity and of copies, so
/// make them the outermost dimension a scheduler splits along (a plane of a 3-d field, a row of
/// a matrix). A Buffer is a cheap handle: copies share one array. The array and its replicas
/// live until the last handle is gone and every copy and access in flight for it has run.
/// Nothing is allocated before the first access. Rows never written have no value anywhere:
/// reading them is a tessera::Error, so start with a write.
///
///   tessera::Buffer u(memory, n, sizeof(float), "u");
///   float* h = static_cast<float*>(u.request(tessera::Access::write).get());
///   std::fill_n(h, n, 1.0f);
///   u.release();
///   tessera::Stream& s = devices.accelerator(0).compute_stream(0);
///   auto* d = static_cast<float*>(u.prepare(1, s, tessera::Access::read_write));  // copies in
///   s.enqueue_host([d, n] { for (std::size_t i = 0; i < n; ++i) d[i] *= 2; });    // the kernel
///   u.finish(1, s, tessera::Access::read_write);  // sim:0 now holds the only valid copy
///
/// Thread safe: any thread may call any member; each buffer serialises its own calls.
/// Accesses on overlapping rows must be ordered by the caller (a graph's edges): two in flight
/// at once, where one of them writes, is a tessera::Error.
class Buffer {
 public:
  /// Throws tessera::Error for zero rows, zero row_bytes, or a size beyond size_t.
  Buffer(MemoryManager& manager, std::size_t rows, std::size_t row_bytes, std::string name);

  const std::string& name() const;
  std::size_t rows() const;
  std::size_t row_bytes() const;
  /// rows() * row_bytes().
  std::size_t bytes() const;
  /// [0, rows()).
  RowRange all() const { return {0, rows()}; }

  /// Makes the replica in `space` ready for a kernel that `stream` will run on `rows`:
  /// allocates it (evicting least recently used replicas if the device's budget is full),
  /// enqueues on copy streams the copies that bring its missing rows up to date (for every mode
  /// but write), and makes `stream` wait, on the device, for those copies and for earlier work
  /// the access must follow. Returns the replica's base (row 0, not rows.begin). Enqueue the
  /// kernel on `stream`, then call finish with the same arguments.
  ///
  ///   auto* x = static_cast<double*>(b.prepare(2, s, tessera::Access::read, {0, 64}));
  ///   s.enqueue_host([x] { use(x); });
  ///   b.finish(2, s, tessera::Access::read, {0, 64});
  ///
  /// Throws tessera::Error for a space or rows out of range, a stream of another device, rows
  /// never written (unless mode is write), an access in flight or a host hold on overlapping
  /// rows where either writes, and a replica that cannot fit even after eviction.
  void* prepare(std::size_t space, Stream& stream, Access mode, RowRange rows);
  void* prepare(std::size_t space, Stream& stream, Access mode) { return prepare(space, stream, mode, all()); }

  /// Ends the access `prepare` began: records its completion on `stream`. After a writing mode
  /// the replica is the only valid one for `rows`; after a read, later writers of the replica
  /// wait for it.
  ///
  ///   b.finish(2, s, tessera::Access::read, {0, 64});
  ///
  /// Throws tessera::Error when no access with these arguments is in flight.
  void finish(std::size_t space, Stream& stream, Access mode, RowRange rows);
  void finish(std::size_t space, Stream& stream, Access mode) { finish(space, stream, mode, all()); }

  /// Host access: makes the host replica valid for `rows` (copies from devices as needed, for
  /// every mode but write), holds it for the host, and returns a future that is ready, with the
  /// host replica's base, once those copies and any device work still using those rows of the
  /// host replica are done. Call release() when the host is finished with it.
  ///
  ///   auto* h = static_cast<float*>(u.request(tessera::Access::read).get());
  ///   print(h[0]);
  ///   u.release();
  ///
  /// Holds may overlap where none of them writes: any number of host readers share the rows,
  /// a host writer has them alone (the host threads of a graph level that read one tensor).
  ///
  /// Throws tessera::Error for rows out of range, a hold on overlapping rows where either
  /// writes, rows never written (unless mode is write), or an access in flight that conflicts.
  std::future<void*> request(Access mode, RowRange rows);
  std::future<void*> request(Access mode) { return request(mode, all()); }
  /// Ends the host hold that request(mode, rows) took. Throws tessera::Error when there is none.
  ///
  ///   u.release(tessera::Access::read, {0, 64});
  void release(Access mode, RowRange rows);
  void release(Access mode) { release(mode, all()); }
  /// Ends the only host hold. Throws tessera::Error when there is none, or several (name the
  /// one to end with release(mode, rows)).
  void release();

  /// Equal for every handle to one array, distinct between arrays alive at once: the key
  /// under which front ends record the accesses they declare (AccessLog).
  const void* key() const noexcept { return state_.get(); }

  /// The rows the replica in `space` holds valid now (in call order: copies and kernels the
  /// bookkeeping already counts may still be running).
  ///
  ///   EXPECT_EQ(b.valid_rows(1), tessera::RowRanges(tessera::RowRange{0, 10}));
  RowRanges valid_rows(std::size_t space) const;
  /// Whether a replica is allocated in `space`.
  bool has_replica(std::size_t space) const;
  /// Bytes this buffer has had copied, by direction.
  TransferStats bytes_transferred() const;

  /// The host replica's base while it is the only valid copy of every row: since a host write
  /// of every row ended (finish or release), nothing has prepared the buffer on a device or
  /// requested it. nullptr otherwise (and for a moved-from handle). For a front end that orders
  /// its own accesses (the task runtime: its dependencies keep conflicting work apart) and may
  /// then skip the bookkeeping on the host, which would change nothing; others use request.
  ///
  ///   void* p = b.host_if_sole();
  ///   if (p == nullptr) p = b.prepare(0, host_stream, mode);  // and finish after the work
  void* host_if_sole() const noexcept;

 private:
  detail::BufferState& state() const;
  std::shared_ptr<detail::BufferState> state_;
};

}  // namespace tessera
