// The tensor Jacobi3D's sweep (apps/jacobi3d/tensor_sweep.hpp) on one process: a periodic
// (2n)^3 tensor in 2 x 2 x 2 blocks of n^3, each sweep a for_each that averages, holds the
// planes and reduces the largest change as it runs (reduce_into), against the proxy's own
// `step` on the same eight blocks, shared out by OpenMP (what the hand-written MPI solver does
// on a rank). Neither side exchanges halos in the timed loop. Before timing, one sweep of each
// from the proxy's start must give the reference's bits and largest change. Then the same on one
// core (the calling thread and the executor's workers all pinned to the core it runs on, the
// blocks stepped without OpenMP): two cores share this VM's memory bandwidth, which hides what a
// sweep costs the core itself (per-row set-up, the reduction's fold), and a rank of the 2-rank
// Jacobi3D has one core.
#include "baselines.hpp"
#include "kernels.hpp"

#include "jacobi3d/jacobi.hpp"
#include "jacobi3d/tensor_sweep.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <sched.h>

#include <vector>

namespace tessera::bench {

void run_jacobi(Report& report, const Settings& s, StreamArrays& triad) {
  jacobi3d::Problem p;
  p.blocks = 2;
  p.size = s.quick ? 64 : 128;
  p.max_iterations = 1;
  const std::int64_t n = p.cells();
  Executor ex;
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);

  // The proxy's blocks after its first iteration (ghosts exchanged, one step).
  std::vector<jacobi3d::BlockGrid> blocks;
  const jacobi3d::Outcome first = jacobi3d::reference(p, blocks);
  const std::vector<double> want = jacobi3d::dense_grid(p, blocks);

  TensorOptions<3> o;
  o.with_padding(1);
  o.periodic = {true, true, true};
  o.sub_partitions = Extent<3>{2, 2, 2};
  const Extent<3> sizes = Extent<3>::filled(static_cast<std::size_t>(p.size));
  Tensor<double, 3, Contiguous> u(memory, sizes, TensorOptions<3>(o).named("u")), v(memory, sizes, TensorOptions<3>(o).named("v"));
  std::vector<double> start(sizes.volume(), 0.0);
  for_each_index(Box<3>(sizes), [&](const Index<3>& i) {
    if (i.coords[0] % n == 0 || i.coords[1] % n == 0 || i.coords[2] % n == 0) start[sizes.linear(i)] = 255.0;
  });
  u.fill_from(start.data());
  u.exchange_padding();
  u.load_boundary(Periodic{});
  const auto sweep = jacobi3d::TensorSweep::for_blocks_of(n);
  ReductionResult<double> largest;
  auto run = [&] { for_each(ex, sweep, read_only(u), write_only(v), reduce_into(largest, Max{})); };
  run();
  std::vector<double> got(sizes.volume());
  v.gather_to(got.data());
  if (got != want || largest.value() != first.error) mismatch("jacobi: the sweep is not the reference's first step");

  const auto r = Interleaved::run(s.rounds, {{"tessera", run},
                                             {"openmp", [&] { baseline::jacobi_steps(blocks.data(), blocks.size()); }},
                                             {"stream-triad", [&] { triad.triad(); }}});
  const double bytes = 16.0 * static_cast<double>(sizes.volume());  // read u, write v
  const std::string name = "jacobi-sweep-" + std::to_string(p.size) + "^3";
  report_pair(report, name, r, "tessera", "openmp", bytes);
  report_vs_stream(report, name, r, "openmp", bytes, triad.triad_bytes());

  // Workers inherit the affinity of the thread that starts them.
  cpu_set_t all, one;
  if (sched_getaffinity(0, sizeof all, &all) != 0) return;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return;
  {
    ExecutorOptions one_worker;
    one_worker.gpu_workers = 1;
    one_worker.cpu_workers = 0;
    Executor alone(one_worker);
    // Ten sweeps a call: one (5 ms) is shorter than this VM's hiccups.
    constexpr int sweeps = 10;
    const auto r1 = Interleaved::run(
        s.rounds, {{"tessera",
                    [&] {
                      for (int k = 0; k < sweeps; ++k)
                        for_each(alone, sweep, read_only(u), write_only(v), reduce_into(largest, Max{}));
                    }},
                   {"step", [&] {
                      for (int k = 0; k < sweeps; ++k) baseline::jacobi_steps(blocks.data(), blocks.size(), true);
                    }}});
    report_pair(report, name + "-1core", r1, "tessera", "step", sweeps * bytes);

    // The stencil alone (no held planes, no reduction), as a for_each and as the same loop
    // written by hand over each block's own memory (the tensor's rows and planes): what the CPU
    // loop adds to a row of n sites.
    auto average = [] TESSERA_HOST_DEVICE(auto in, auto out) {
      *out = (*in + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1) + *in.offset(2, -1) +
              *in.offset(2, 1)) /
             7.0;
    };
    const std::size_t pitch = u.buffer(0).row_bytes() / sizeof(double);
    const std::size_t rows_per_plane = static_cast<std::size_t>(n) + 2;
    // Sweep by sweep over all the blocks, as the for_each goes (a block swept `times` times in a
    // row would stay in the cache).
    auto by_hand = [&](int times) {
      const std::size_t count = u.num_blocks();
      std::vector<const double*> in(count);
      std::vector<double*> out(count);
      for (std::size_t b = 0; b < count; ++b) {
        in[b] = static_cast<const double*>(u.buffer(b).request(Access::read).get());
        out[b] = static_cast<double*>(v.buffer(b).request(Access::write).get());
      }
      for (int k = 0; k < times; ++k)
        for (std::size_t b = 0; b < count; ++b)
          baseline::jacobi_average(in[b], out[b], static_cast<std::size_t>(n), pitch, rows_per_plane);
      for (std::size_t b = 0; b < count; ++b) {
        u.buffer(b).release();
        v.buffer(b).release();
      }
    };
    // Both give the same bits before either is timed.
    for_each(alone, average, read_only(u), write_only(v));
    std::vector<double> ours(sizes.volume()), theirs(sizes.volume());
    v.gather_to(ours.data());
    by_hand(1);
    v.gather_to(theirs.data());
    if (ours != theirs) mismatch("jacobi: the average by hand differs from the for_each's");
    const auto r2 = Interleaved::run(s.rounds, {{"tessera",
                                                 [&] {
                                                   for (int k = 0; k < sweeps; ++k)
                                                     for_each(alone, average, read_only(u), write_only(v));
                                                 }},
                                                {"by-hand", [&] { by_hand(sweeps); }}});
    report_pair(report, "jacobi-average-" + std::to_string(p.size) + "^3-1core", r2, "tessera", "by-hand",
                sweeps * bytes);
  }
  sched_setaffinity(0, sizeof all, &all);
}

}  // namespace tessera::bench
