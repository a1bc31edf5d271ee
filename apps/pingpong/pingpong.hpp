#pragma once
// PREMA's ping-pong (§4.2) between ranks 0 and 1: the half round-trip time of a message of N
// bytes, through raw MPI and through tessera::dist, on the same buffers in the same run. Ranks
// above 1 only join the barriers.

#include <tessera/dist/communicator.hpp>
#include <tessera/memory/buffer.hpp>

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <span>

namespace pingpong {

constexpr int tag = 11;

/// Seconds per one-way trip: MPI_Send/MPI_Recv on `comm`, as a program without tessera does.
inline double raw_mpi(MPI_Comm comm, std::byte* data, std::size_t bytes, int reps) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Barrier(comm);
  const auto start = std::chrono::steady_clock::now();
  const int n = static_cast<int>(bytes);
  for (int i = 0; i < reps; ++i) {
    if (rank == 0) {
      MPI_Send(data, n, MPI_BYTE, 1, tag, comm);
      MPI_Recv(data, n, MPI_BYTE, 1, tag, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(data, n, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
      MPI_Send(data, n, MPI_BYTE, 0, tag, comm);
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MPI_Barrier(comm);
  return s / (2.0 * reps);
}

/// The same through tessera::dist: a non-blocking send or receive and its Request::wait.
inline double tessera_bytes(tessera::dist::Communicator& comm, std::byte* data, std::size_t bytes, int reps) {
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  std::span<std::byte> s(data, bytes);
  for (int i = 0; i < reps; ++i) {
    if (comm.rank() == 0) {
      comm.send(std::span<const std::byte>(s), 1, tag).wait();
      comm.recv(s, 1, tag).wait();
    } else if (comm.rank() == 1) {
      comm.recv(s, 0, tag).wait();
      comm.send(std::span<const std::byte>(s), 0, tag).wait();
    }
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  comm.barrier();
  return t / (2.0 * reps);
}

/// The same with a tessera Buffer: rows held for reading (send) or writing (receive) through the
/// memory layer, which brings them from the device that holds them when that is not the host.
inline double tessera_buffer(tessera::dist::Communicator& comm, tessera::Buffer& buffer, std::size_t rows, int reps) {
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    if (comm.rank() == 0) {
      comm.send(buffer, {0, rows}, 1, tag).wait();
      comm.recv(buffer, {0, rows}, 1, tag).wait();
    } else if (comm.rank() == 1) {
      comm.recv(buffer, {0, rows}, 0, tag).wait();
      comm.send(buffer, {0, rows}, 0, tag).wait();
    }
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  comm.barrier();
  return t / (2.0 * reps);
}

/// Enough round trips for about `budget` seconds at `bytes` (at least 3).
inline int repetitions(std::size_t bytes, double budget) {
  const double guess = 2e-6 + static_cast<double>(bytes) / 2e9;  // a shared-memory trip
  const int reps = static_cast<int>(budget / (2 * guess));
  return reps < 3 ? 3 : (reps > 20000 ? 20000 : reps);
}

}  // namespace pingpong
