#pragma once
// Jacobi3D on tessera's mobile objects: every block is an object, and it sends its six faces to
// its neighbours as `ghost` messages as soon as it has stepped, for the step after; a block steps
// once the iteration's `start` message has reached it and all six ghosts are in. Blocks on one
// rank step in parallel on the executor's workers, and with more blocks than ranks a block whose
// ghosts have arrived computes while others' are still on the way: over-decomposition hides the
// halo. Faces leave right after the step that makes them rather than at the next `start`, so
// they travel while this rank's other blocks compute and while the iteration's error is
// reduced; a face that arrives before its block has stepped the current iteration (a neighbour
// is one step ahead) waits in `early` until then.

#include "jacobi.hpp"

#include <tessera/dist/objects.hpp>

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <span>

namespace jacobi3d {

struct Block {
  BlockGrid grid;
  int id = 0;
  int iteration = 0;  // the step it takes next
  int received = 0;   // ghosts of that step in
  bool started = false;
  bool faces_sent = false;  // this step's faces are out
  double error = 0;
  double compute_seconds = 0;
  std::array<std::vector<double>, 6> early;  // ghosts of the step after, by face (empty: none)

  void pack(tessera::dist::Writer& w) const {
    w.put(id);
    w.put(grid.n);
    w.put(iteration);
    w.put(received);
    w.put(started);
    w.put(faces_sent);
    w.put(error);
    w.put(compute_seconds);
    w.put(grid.t);
    for (const auto& face : early) w.put(face);
  }
  static Block unpack(tessera::dist::Reader& r) {
    Block b;
    b.id = r.get<int>();
    b.grid = BlockGrid(r.get<int>());
    b.iteration = r.get<int>();
    b.received = r.get<int>();
    b.started = r.get<bool>();
    b.faces_sent = r.get<bool>();
    b.error = r.get<double>();
    b.compute_seconds = r.get<double>();
    b.grid.t = r.get<std::vector<double>>();
    for (auto& face : b.early) face = r.get<std::vector<double>>();
    return b;
  }
};

inline tessera::dist::ObjectName block_name(int id) { return {static_cast<std::uint64_t>(id)}; }

struct ObjectsRun {
  Outcome outcome;
  double seconds = 0;          // the iterations, all ranks between two barriers
  double compute_seconds = 0;  // in block steps on this rank
  std::size_t local_blocks = 0;
};

/// Runs the problem over `comm`'s ranks. `between(iteration, objects)` runs on every rank after
/// each iteration (the tests migrate blocks there); it may be empty.
inline ObjectsRun solve_with_objects(tessera::dist::Communicator& comm, const Problem& p,
                                     const std::function<void(int, tessera::dist::Objects&)>& between = {},
                                     std::function<void(tessera::dist::Objects&)> at_end = {}) {
  namespace td = tessera::dist;
  // Before the runtime, so that it outlives every handler that sends with it.
  std::optional<td::Handler<Block, int, int, std::span<const double>>> ghost;
  td::Objects objects(comm);
  const int nb = p.blocks * p.blocks * p.blocks;
  // The block's faces, for the step it takes next, to the neighbours that need them.
  auto send_faces = [&p, &ghost](Block& b, td::HandlerContext& ctx) {
    std::vector<double> plane;
    for (int f = 0; f < 6; ++f) {
      pack_face(b.grid, static_cast<Face>(f), plane);
      const int to = linear(neighbour(coords(b.id, p.blocks), static_cast<Face>(f), p.blocks), p.blocks);
      ctx.objects().send(block_name(to), *ghost, static_cast<int>(opposite(static_cast<Face>(f))), b.iteration,
                         std::span<const double>(plane));
    }
    b.faces_sent = true;
  };
  auto try_step = [&p, send_faces](Block& b, td::HandlerContext& ctx) {
    if (!b.started || b.received < 6) return;
    const auto t0 = std::chrono::steady_clock::now();
    b.error = step(b.grid);
    b.compute_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++b.iteration;
    b.received = 0;
    b.started = false;
    b.faces_sent = false;
    for (int f = 0; f < 6; ++f) {
      auto& face = b.early[static_cast<std::size_t>(f)];
      if (face.empty()) continue;
      unpack_ghost(b.grid, static_cast<Face>(f), face.data());
      face.clear();
      ++b.received;
    }
    // The next step's faces leave now, while the other blocks compute. After the last step
    // nobody would read them.
    if (b.iteration < p.max_iterations) send_faces(b, ctx);
  };
  ghost = objects.handler<Block, int, int, std::span<const double>>(
      "ghost", [try_step](Block& b, td::HandlerContext& ctx, int face, int iteration, std::span<const double> plane) {
        if (iteration != b.iteration) {  // a neighbour one step ahead: keep it for the next step
          b.early[static_cast<std::size_t>(face)].assign(plane.begin(), plane.end());
          return;
        }
        unpack_ghost(b.grid, static_cast<Face>(face), plane.data());
        ++b.received;
        try_step(b, ctx);
      });
  auto start = objects.handler<Block, int>("start", [send_faces, try_step](Block& b, td::HandlerContext& ctx, int) {
    if (!b.faces_sent) send_faces(b, ctx);  // the first iteration's
    b.started = true;
    try_step(b, ctx);
  });
  // Contiguous runs of blocks per rank (z slabs when B^3 divides evenly): most faces stay local.
  for (int id = 0; id < nb; ++id) {
    if (static_cast<long>(id) * comm.size() / nb != comm.rank()) continue;
    Block b;
    b.id = id;
    b.grid = BlockGrid(p.cells());
    constrain(b.grid);
    objects.add(block_name(id), std::move(b));
  }
  objects.wait();
  comm.barrier();
  ObjectsRun run;
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < p.max_iterations; ++it) {
    for (auto name : objects.local_names()) objects.send(name, start, it);
    objects.wait();
    double local = 0;
    for (auto name : objects.local_names()) local = std::max(local, objects.local<Block>(name).error);
    const double err = comm.all_reduce(local, td::Communicator::Reduce::max);
    run.outcome.iterations = it + 1;
    run.outcome.error = err;
    if (err < p.threshold) break;
    if (between) {
      between(it, objects);
      objects.wait();  // moves done before the next starts go to the blocks this rank then holds
    }
  }
  comm.barrier();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto name : objects.local_names()) run.compute_seconds += objects.local<Block>(name).compute_seconds;
  run.local_blocks = objects.local_names().size();
  if (at_end) at_end(objects);
  return run;
}

}  // namespace jacobi3d
