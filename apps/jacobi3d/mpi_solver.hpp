#pragma once
// The same Jacobi3D written by hand on MPI, the way a program without a runtime does it: each
// rank owns the same contiguous run of blocks as the mobile-object solver, posts a receive for
// every ghost face whose block lives elsewhere, sends its faces, copies the faces between its
// own blocks, waits for all, steps its blocks one after the other and reduces the error with
// MPI_Allreduce. Same kernel, same faces, same bytes on the wire.

#include "jacobi.hpp"

#include <mpi.h>

#include <chrono>
#include <map>

namespace jacobi3d {

struct MpiRun {
  Outcome outcome;
  double seconds = 0;
  double exchange_seconds = 0;      // posting, copying and waiting for faces, on this rank
  std::map<int, BlockGrid> blocks;  // this rank's, by block id
};

inline MpiRun solve_with_mpi(MPI_Comm comm, const Problem& p) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int nb = p.blocks * p.blocks * p.blocks;
  auto owner = [&](int id) { return static_cast<int>(static_cast<long>(id) * size / nb); };
  MpiRun run;
  for (int id = 0; id < nb; ++id)
    if (owner(id) == rank) {
      auto& b = run.blocks.emplace(id, BlockGrid(p.cells())).first->second;
      constrain(b);
    }
  const std::size_t face_size = static_cast<std::size_t>(p.cells()) * p.cells();
  std::map<int, std::array<std::vector<double>, 6>> out, in;
  for (auto& [id, b] : run.blocks)
    for (int f = 0; f < 6; ++f) {
      out[id][static_cast<std::size_t>(f)].resize(face_size);
      in[id][static_cast<std::size_t>(f)].resize(face_size);
    }
  std::vector<MPI_Request> requests;
  MPI_Barrier(comm);
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < p.max_iterations; ++it) {
    const auto e0 = std::chrono::steady_clock::now();
    requests.clear();
    // Ghost (block, face) arrives with tag block * 6 + face.
    for (auto& [id, b] : run.blocks)
      for (int f = 0; f < 6; ++f) {
        const int from = linear(neighbour(coords(id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
        if (owner(from) == rank) continue;
        requests.emplace_back();
        MPI_Irecv(in[id][static_cast<std::size_t>(f)].data(), static_cast<int>(face_size), MPI_DOUBLE, owner(from),
                  id * 6 + f, comm, &requests.back());
      }
    for (auto& [id, b] : run.blocks)
      for (int f = 0; f < 6; ++f) {
        auto& face = out[id][static_cast<std::size_t>(f)];
        pack_face(b, static_cast<Face>(f), face);
        const int to = linear(neighbour(coords(id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
        if (owner(to) == rank) continue;
        requests.emplace_back();
        MPI_Isend(face.data(), static_cast<int>(face_size), MPI_DOUBLE, owner(to),
                  to * 6 + static_cast<int>(opposite(static_cast<Face>(f))), comm, &requests.back());
      }
    for (auto& [id, b] : run.blocks)
      for (int f = 0; f < 6; ++f) {
        const int from = linear(neighbour(coords(id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
        if (owner(from) == rank)
          unpack_ghost(b, static_cast<Face>(f),
                       out[from][static_cast<std::size_t>(opposite(static_cast<Face>(f)))].data());
      }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (auto& [id, b] : run.blocks)
      for (int f = 0; f < 6; ++f) {
        const int from = linear(neighbour(coords(id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
        if (owner(from) != rank) unpack_ghost(b, static_cast<Face>(f), in[id][static_cast<std::size_t>(f)].data());
      }
    run.exchange_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    double local = 0;
    for (auto& [id, b] : run.blocks) local = std::max(local, step(b));
    double err = 0;
    MPI_Allreduce(&local, &err, 1, MPI_DOUBLE, MPI_MAX, comm);
    run.outcome.iterations = it + 1;
    run.outcome.error = err;
    if (err < p.threshold) break;
  }
  MPI_Barrier(comm);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace jacobi3d
