// tessera-bench-dist (run by `make bench SUITE=dist` under mpirun -np 2): tessera::dist against
// raw MPI in the same run. Ping-pong latency and bandwidth (PREMA §4.2) against MPI_Send/MPI_Recv,
// and the rate of empty remote handlers against a naive MPI_Send/MPI_Recv per message loop;
// objects that all start on one rank, with and without work stealing.
// With the apps built, the euler2d shock-bubble on the two ranks against one rank alone, and
// Jacobi3D on a distributed tensor and on mobile objects against its hand-written MPI version.
//
//   mpirun -np 2 tessera-bench-dist [--json FILE] [--quick]
#include "../../apps/pingpong/pingpong.hpp"
#include "common/report.hpp"
#if TESSERA_BENCH_EULER2D
#include "euler2d_ranks.hpp"
#endif
#if TESSERA_BENCH_JACOBI3D
#include "jacobi3d_ranks.hpp"
#endif

#include <tessera/dist/objects.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct Payload {
  std::uint64_t a, b;  // 16 B, a small message
};

// Messages per second of a loop that sends each message with its own MPI_Send, received one by
// one: what a program without aggregation does.
double naive_mpi_rate(MPI_Comm comm, int rank, long messages) {
  Payload p{1, 2};
  MPI_Barrier(comm);
  const auto start = clock_type::now();
  if (rank == 0) {
    for (long i = 0; i < messages; ++i) MPI_Send(&p, sizeof p, MPI_BYTE, 1, 21, comm);
  } else if (rank == 1) {
    for (long i = 0; i < messages; ++i) MPI_Recv(&p, sizeof p, MPI_BYTE, 0, 21, comm, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(comm);
  return static_cast<double>(messages) / std::chrono::duration<double>(clock_type::now() - start).count();
}

struct Sink {
  std::uint64_t count = 0;
};

// Messages per second of empty handlers on an object of rank 1, sent from rank 0, until
// Objects::wait() says every one has run.
double handler_rate(tessera::dist::Communicator& comm, long messages, bool& all_handled) {
  tessera::dist::Objects objects(comm);
  auto empty = objects.handler<Sink, Payload>("empty", [](Sink& s, tessera::dist::HandlerContext&, Payload) { ++s.count; });
  const tessera::dist::ObjectName sink{1};  // home: rank 1 of 2
  if (comm.rank() == 1) objects.add(sink, Sink{});
  objects.wait();
  comm.barrier();
  const auto start = clock_type::now();
  if (comm.rank() == 0)
    for (long i = 0; i < messages; ++i) objects.send(sink, empty, Payload{static_cast<std::uint64_t>(i), 0});
  objects.wait();
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  all_handled = comm.rank() != 1 || objects.local<Sink>(sink).count == static_cast<std::uint64_t>(messages);
  return static_cast<double>(messages) / seconds;
}

// Seconds to run `per_object` handlers of `work` each on 16 objects that all start on rank 0,
// sent from every rank: the imbalance work stealing is for.
double imbalanced_seconds(tessera::dist::Communicator& comm, bool steal, std::chrono::microseconds work,
                          int per_object) {
  tessera::dist::ObjectsOptions options;
  options.steal_work = steal;
  tessera::dist::Objects objects(comm, options);
  auto busy = objects.handler<Sink, Payload>("busy", [work](Sink& s, tessera::dist::HandlerContext&, Payload) {
    const auto until = clock_type::now() + work;
    while (clock_type::now() < until) {
    }
    ++s.count;
  });
  const int num_objects = 16;
  if (comm.rank() == 0)
    for (int k = 0; k < num_objects; ++k) objects.add(tessera::dist::ObjectName{static_cast<std::uint64_t>(k)}, Sink{});
  objects.wait();
  comm.barrier();
  const auto start = clock_type::now();
  for (int j = 0; j < per_object; ++j)
    for (int k = 0; k < num_objects; ++k)
      objects.send(tessera::dist::ObjectName{static_cast<std::uint64_t>(k)}, busy, Payload{0, 0});
  objects.wait();
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  auto args = tessera::bench::parse_args(argc, argv);
  tessera::dist::Communicator comm(&argc, &argv);
  if (comm.size() != 2) {
    if (comm.rank() == 0) std::fprintf(stderr, "tessera-bench-dist: run it on two ranks (mpirun -np 2)\n");
    return 2;
  }
  const bool lead = comm.rank() == 0;
  tessera::bench::Report report("dist");
  if (lead) {
    std::printf("dist suite: 2 ranks, %s%s\n", comm.library_version().c_str(), args.quick ? " (quick)" : "");
    report.header();
  }

  if (args.runs("pingpong")) {
    const double budget = args.quick ? 0.02 : 0.2;
    std::vector<std::byte> bytes(64u << 20, std::byte{3});
    for (std::size_t n : {std::size_t{8}, std::size_t{1024}, std::size_t{1} << 20, std::size_t{64} << 20}) {
      const int reps = pingpong::repetitions(n, budget);
      double raw = 1e30, ours = 1e30;
      for (int round = 0; round < 5; ++round) {
        raw = std::min(raw, pingpong::raw_mpi(MPI_COMM_WORLD, bytes.data(), n, reps));
        ours = std::min(ours, pingpong::tessera_bytes(comm, bytes.data(), n, reps));
      }
      if (!lead) continue;
      const std::string name = "pingpong-" + std::to_string(n) + "B";
      if (n <= 1024) {
        report.add({name, "tessera", "one-way", ours * 1e6, "us", "MPI_Send/Recv", raw * 1e6, 0});
      } else {
        report.add({name, "tessera", "bandwidth", static_cast<double>(n) / ours * 1e-9, "GB/s", "MPI_Send/Recv",
                    static_cast<double>(n) / raw * 1e-9, 0});
      }
    }
  }

  if (args.runs("handlers")) {
    const long messages = args.quick ? 100000 : 1000000;
    double naive = 0, ours = 0;
    bool handled = true;
    for (int round = 0; round < 3; ++round) {
      naive = std::max(naive, naive_mpi_rate(MPI_COMM_WORLD, comm.rank(), messages));
      bool ok = false;
      ours = std::max(ours, handler_rate(comm, messages, ok));
      handled = handled && ok;
    }
    if (lead) report.add({"handlers-empty-16B", "tessera", "rate", ours * 1e-6, "M/s", "MPI_Send per msg", naive * 1e-6, 0});
    if (!handled) {
      std::fprintf(stderr, "rank %d: not every handler message ran\n", comm.rank());
      return 1;
    }
  }
  if (args.runs("steal")) {
    // 16 objects on rank 0, 50 us handlers from both ranks: without stealing rank 0 runs them
    // all; with it the idle rank takes objects. Ideal: half the work on each rank.
    const auto work = std::chrono::microseconds(50);
    const int per_object = args.quick ? 10 : 40;
    double off = 1e30, on = 1e30;
    for (int round = 0; round < 3; ++round) {
      off = std::min(off, imbalanced_seconds(comm, false, work, per_object));
      on = std::min(on, imbalanced_seconds(comm, true, work, per_object));
    }
    const double ideal = 16.0 * per_object * comm.size() * 50e-6 / comm.size();
    if (lead) {
      report.add({"imbalanced-16-objects-50us", "steal_work", "time", on * 1e3, "ms", "no stealing", off * 1e3, 0});
      std::printf("  (all on one rank, the work alone: %.1f ms; split evenly over the ranks: %.1f ms)\n",
                  ideal * comm.size() * 1e3, ideal * 1e3);
    }
  }
#if TESSERA_BENCH_EULER2D
  if (args.runs("euler2d") && !bench_euler2d_ranks(comm, report, args.quick)) return 1;
#endif
#if TESSERA_BENCH_JACOBI3D
  if (args.runs("jacobi3d") && !bench_jacobi3d_ranks(comm, report, args.quick)) return 1;
#endif
  if (lead) report.write_json(args.json);
  return 0;
}
