// The 2-D Euler equations by FORCE with dimensional splitting (Ripple §8): the shock-bubble
// interaction by default, or Toro's Riemann tests along x or y, on the selected devices, with PNG
// density snapshots, HDF5/XDMF output, checkpoints, restart, and a progress line.
//
//   tessera-euler2d [--problem shock-bubble|shock|toro1..toro5] [--axis x|y] [--size N]
//                   [--steps S] [--t-final T] [--cfl C] [--devices SPEC]
//                   [--layout contiguous|strided|tiled] [--out DIR] [--png-every K]
//                   [--h5-every K] [--checkpoint-every K] [--check-finite K] [--restart FILE]
//                   [--trace FILE]
//   tessera-euler2d --config run.toml   (the same options as `size = 400` lines)
//   tessera-euler2d --help | --version  (every option with its default | tessera's version)
//   mpirun -np 4 tessera-euler2d ...    (the grid cut over 4 ranks; the same bytes as 1 rank)
//
// Each time step is one run of a tessera::Graph built once (Ripple Listing 12: wavespeeds, max
// reduction, dt, boundaries, x sweep and y sweep with halo-transfer nodes between partitions).
// Started by an MPI launcher (in a build with MPI), each rank steps its part of the grid, with
// messages to its neighbours in the graph; rank 0 alone prints and writes, from states every
// rank gathers (the gathers are collective).

#include "euler2d/options.hpp"
#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/graph.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/io/hdf5.hpp>
#include <tessera/io/png.hpp>
#include <tessera/layout.hpp>
#include <tessera_app/cli.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#if TESSERA_EULER2D_MPI
#include <tessera/dist/communicator.hpp>

#include <mpi.h>
#endif

namespace {

using euler2d::Settings;

euler2d::Problem make_problem(const Settings& s) {
  euler2d::Problem p;
  if (s.problem == "shock-bubble" || s.problem == "shock") {
    euler2d::ShockBubble config;
    config.nx = config.ny = s.size;
    config.with_bubble = s.problem == "shock-bubble";
    p = euler2d::shock_bubble(config);
  } else if (s.problem.size() == 5 && s.problem.rfind("toro", 0) == 0 && s.problem[4] >= '1' && s.problem[4] <= '5') {
    p = euler2d::toro_test(s.problem[4] - '0', s.axis == "x" ? euler2d::Axis::x : euler2d::Axis::y, s.size);
  } else {
    throw tessera::Error("--problem must be shock-bubble, shock or toro1..toro5, got '" + s.problem + "'");
  }
  if (s.t_final) {
    if (!(*s.t_final > 0)) throw tessera::Error("--t-final must be positive, got " + std::to_string(*s.t_final));
    p.t_final = *s.t_final;
  }
  return p;
}

// The problem a checkpoint was saved from, so a restart of another one is refused (the grid
// sizes alone do not tell a shock-bubble from a shock).
std::int64_t problem_code(const Settings& s) {
  if (s.problem == "shock-bubble") return 1;
  if (s.problem == "shock") return 2;
  return 10 + (s.problem[4] - '0') + (s.axis == "y" ? 100 : 0);  // toroN along x or y
}

// Fails now, naming the path, if `path` cannot be written: found only after the run, an
// unwritable output cost the run's final checkpoint and picture.
void check_writable(const std::string& path, const char* what) {
  const bool existed = std::filesystem::exists(path);
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (!f) throw tessera::Error(std::string("cannot write the ") + what + " to '" + path + "': " + std::strerror(errno));
  std::fclose(f);
  if (!existed) std::filesystem::remove(path);
}

std::string numbered(const std::string& dir, const char* stem, std::size_t step, const char* ext) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%06zu.%s", stem, step, ext);
  return (std::filesystem::path(dir) / name).string();
}

// `ranks`: the run's ranks when there are several (null for one process). `executor_options`:
// the workers of this rank (a share of the node's cores when ranks share it).
template <typename Layout>
int run(const Settings& s, tessera::Ranks* ranks, const tessera::ExecutorOptions& executor_options) {
  using State = euler2d::State<double>;
  // Rank 0 alone prints and writes files; every rank takes part in the gathers behind them.
  const bool lead = ranks == nullptr || ranks->rank() == 0;
  tessera::DeviceSet devices = tessera::DeviceSet::select(s.devices);
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(executor_options);
  euler2d::SolverOptions options;
  options.cfl = s.cfl;
  options.ranks = ranks;
  euler2d::EulerSolver<double, Layout> solver(memory, executor, make_problem(s), options);
  const euler2d::Problem& p = solver.problem();
  if (lead) {
    std::filesystem::create_directories(s.out);
    // Pieces of outputs a killed run was writing (every output is written as NAME.partial and
    // renamed when whole) are removed: nothing under a real name is ever half written.
    for (const auto& entry : std::filesystem::directory_iterator(s.out))
      if (entry.is_regular_file() && entry.path().extension() == ".partial") std::filesystem::remove(entry.path());
    if (!s.trace.empty()) check_writable(s.trace, "trace");
  }

  if (!s.restart.empty()) {
    // Every rank reads the whole file and keeps its part, so any rank count restarts any checkpoint.
    const tessera::io::CheckpointScalars saved = tessera::io::load_checkpoint(s.restart, solver.state());
    const euler2d::RestartClock clock = euler2d::restart_clock(
        s.restart, saved.real("time"), saved.integer("step"),
        saved.contains("problem") ? std::optional<std::int64_t>(saved.integer("problem")) : std::nullopt,
        problem_code(s), p.t_final);
    solver.restore_clock(clock.time, clock.step);
    if (lead)
      std::printf("euler2d: restarted from %s at step %zu, t = %.6f\n", s.restart.c_str(), solver.steps(),
                  solver.time());
  }

  std::optional<tessera::io::Hdf5Series> series;
  if (s.h5_every > 0 && lead)
    series.emplace((std::filesystem::path(s.out) / "euler2d").string(),
                   tessera::io::UniformGrid{{p.nx, p.ny}, {0.0, 0.0}, {p.h, p.h}});
  const auto& gas = solver.gas();
  // A build without libpng writes no default snapshots; asking for them is an error (below).
  auto png_due = [&](std::size_t step, bool last) {
    return tessera::io::png_supported() && (last || s.png_every == 0 ? (last || step == 0) : step % s.png_every == 0);
  };
  auto h5_due = [&](std::size_t step, bool last) { return s.h5_every > 0 && (last || step % s.h5_every == 0); };
  auto output = [&](bool last) {
    const std::size_t step = solver.steps();
    const bool png_now = png_due(step, last), h5_now = h5_due(step, last);
    if (!png_now && !h5_now) return;
    const std::vector<State> cells = solver.gather();  // collective: every rank gathers
    solver.check_finite(cells);                        // never write a picture or a series step of NaNs
    if (!lead) return;
    auto field = [&cells](auto select) {
      std::vector<double> f(cells.size());
      for (std::size_t k = 0; k < cells.size(); ++k) f[k] = static_cast<double>(select(cells[k]));
      return f;
    };
    if (png_now) {
      tessera::io::PngOptions png;
      png.scale = p.nx < 200 ? (400 + p.nx - 1) / p.nx : 1;
      tessera::io::write_png(numbered(s.out, "density", step, "png"),
                             std::span<const double>(field([](const State& c) { return c.density(); })), p.nx, p.ny,
                             png);
    }
    if (h5_now) {
      series->begin_step(static_cast<std::int64_t>(step), solver.time());
      series->write("density", field([](const State& c) { return c.density(); }));
      series->write("pressure", field([&gas](const State& c) { return gas.pressure(c); }));
      series->write("velocity_x", field([](const State& c) { return c.velocity()[0]; }));
      series->write("velocity_y", field([](const State& c) { return c.velocity()[1]; }));
      series->end_step();
    }
  };
  auto checkpoint = [&](const std::string& path) {
    tessera::io::CheckpointScalars scalars;
    scalars.set("time", solver.time());
    scalars.set("step", static_cast<std::int64_t>(solver.steps()));
    scalars.set("problem", problem_code(s));
    solver.check_finite();  // a checkpoint of NaNs would restart into them
    // Collective: every rank gathers, rank 0 writes, and every rank learns whether it could.
    tessera::io::save_checkpoint(path, solver.state(), scalars);
  };

  const std::size_t last_step = s.steps ? *s.steps : std::numeric_limits<std::size_t>::max();
  std::string where = devices.num_accelerators() == 0 ? "host" : "";
  for (std::size_t a = 0; a < devices.num_accelerators(); ++a) where += (a ? ", " : "") + devices.accelerator(a).name();
  if (lead && ranks == nullptr)
    std::printf("euler2d: %s, %zu x %zu cells, %s layout on %s (%zu partitions), t_final %.4f\n", p.name.c_str(), p.nx,
                p.ny, Layout::name, where.c_str(), solver.state().num_partitions(), p.t_final);
  if (lead && ranks != nullptr) {
    const tessera::Extent<2> grid = solver.state().rank_grid();
    std::printf(
        "euler2d: %s, %zu x %zu cells over %d ranks (%zu x %zu), %s layout on %s (%zu partitions per rank, "
        "%zu workers), t_final %.4f\n",
        p.name.c_str(), p.nx, p.ny, ranks->size(), grid[0], grid[1], Layout::name, where.c_str(),
        solver.state().num_partitions(), executor.num_cpu_workers() + executor.num_gpu_workers(), p.t_final);
  }
  if (solver.steps() == 0) output(false);
  // The clock lives on the devices (EulerSolver): a run of `many` takes steps_per_run steps with
  // nothing on the host between them; `one` takes one, for the steps next to host work.
  tessera::Graph one("euler step"), many("euler steps");
  solver.add_step(one);
  if (s.steps_per_run > 1) solver.add_steps(many, s.steps_per_run);
  // The kernels take dt from the devices (uniform), so their arguments are the same every run:
  // what capture asks of a graph.
  if (s.capture) one.capture(), many.capture();
  const bool tracing = lead && !s.trace.empty();  // rank 0's nodes, its messages included
  if (tracing) executor.start_trace();
  // Steps run inside the executor (Graph::run_until) until one needs the host: output, a check,
  // a checkpoint, the progress line or the last step. The first step runs alone and outside the
  // rate: it moves the state to the devices (a 4096^2 state took 170 ms over PCIe on an H100,
  // against 2 ms a step).
  using clock = std::chrono::steady_clock;
  auto host_work_due = [&](std::size_t step) {
    return step >= last_step || (s.check_finite_every > 0 && step % s.check_finite_every == 0) ||
           (s.checkpoint_every > 0 && step % s.checkpoint_every == 0) || png_due(step, false) || h5_due(step, false);
  };
  // Whether steps_per_run steps from `step` on pass no host work and stay short of t_final by
  // the current dt (steps past it take dt = 0: right, but wasted). From the clock alone, so
  // every rank decides alike and runs the same graph (their halo messages must match).
  auto many_fit = [&](std::size_t step) {
    if (s.steps_per_run < 2) return false;
    for (std::size_t k = 1; k < s.steps_per_run; ++k)
      if (host_work_due(step + k)) return false;
    const double dt = static_cast<double>(solver.dt());
    return dt > 0 && p.t_final - solver.time() > dt * static_cast<double>(s.steps_per_run);
  };
  const clock::time_point began = clock::now();
  std::optional<clock::time_point> start;  // the end of the first step
  auto last_report = began;
  std::size_t first = solver.steps();
  while (!solver.finished() && solver.steps() < last_step) {
    const std::size_t from = solver.steps();
    const bool warm = start.has_value();
    const bool batched = warm && many_fit(from);
    (batched ? many : one)
        .run_until(executor,
                   [&] {
                     const std::size_t k = solver.steps();
                     if (solver.finished()) return true;
                     if (k == from) return false;
                     // Every rank stops at the same steps (the gathers are collective); only
                     // rank 0 prints, so only its clock ends a run of steps early, and it then
                     // goes on with the graph the others keep running.
                     return !warm || host_work_due(k) || many_fit(k) != batched ||
                            (lead && clock::now() - last_report > std::chrono::seconds(1));
                   })
        .get();
    const std::size_t step = solver.steps();
    if (!start) start = clock::now(), first = step;
    if (s.check_finite_every > 0 && step % s.check_finite_every == 0) solver.check_finite();
    if (s.checkpoint_every > 0 && step % s.checkpoint_every == 0)
      checkpoint(numbered(s.out, "checkpoint", step, "ckpt"));
    const bool done = solver.finished() || step >= last_step;
    if (!done) output(false);
    const auto now = clock::now();
    if (lead && (done || now - last_report > std::chrono::seconds(1))) {
      // Over the steps after the first; a run of one step reports that step.
      const bool timed = step > first;
      const double seconds = std::chrono::duration<double>(now - (timed ? *start : began)).count();
      const double cells = static_cast<double>(p.nx * p.ny) * static_cast<double>(timed ? step - first : step - from);
      std::printf("euler2d: step %6zu  t = %.6f  dt = %.3e  %.3g cells/s\n", step, solver.time(),
                  static_cast<double>(solver.dt()), seconds > 0 ? cells / seconds : 0.0);
      std::fflush(stdout);
      last_report = now;
    }
  }
  if (tracing) executor.stop_trace().save(s.trace);
  output(true);
  checkpoint((std::filesystem::path(s.out) / "final.ckpt").string());
  if (lead && s.capture) {
    // How the recordings went: each graph's parts recorded (and replayed), or why not.
    for (const tessera::Graph* g : {&one, &many}) {
      if (g->num_passes() == 0) continue;
      const tessera::NodeGraph& pass = g->pass(0);
      std::printf("euler2d: %s captured: %zu recording(s)%s%s\n", pass.name().c_str(), pass.recordings(),
                  pass.capture_refusal().empty() ? "" : ", not replayed: ", pass.capture_refusal().c_str());
    }
  }
  if (lead)
    std::printf("euler2d: done: %zu steps to t = %.6f; output in %s\n", solver.steps(), solver.time(), s.out.c_str());
  return 0;
}

#if TESSERA_EULER2D_MPI
// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: only then does the app
// start MPI, so a plain `tessera-euler2d` runs exactly as in a build without MPI.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}
#endif

int run_layout(const Settings& s, tessera::Ranks* ranks, const tessera::ExecutorOptions& executor_options) {
  if (s.layout == "strided") return run<tessera::Strided>(s, ranks, executor_options);
  if (s.layout == "contiguous") return run<tessera::Contiguous>(s, ranks, executor_options);
  if (s.layout == "tiled") return run<tessera::Tiled<8>>(s, ranks, executor_options);
  throw tessera::Error("--layout must be contiguous, strided or tiled, got '" + s.layout + "'");
}

}  // namespace

int main(int argc, char** argv) try {
  Settings s;
  CLI::App app{"The 2-D Euler equations (FORCE, dimensional splitting) on tessera's devices", "tessera-euler2d"};
  tessera_app::add_standard_options(app);
  euler2d::add_options(app, s);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  euler2d::check_settings(s);
#if TESSERA_EULER2D_MPI
  if (launched_by_mpi()) {
    tessera::dist::Communicator comm(&argc, &argv);
    // Ranks sharing a node share its cores.
    const tessera::ExecutorOptions workers = comm.executor_options();
    if (comm.size() == 1) return run_layout(s, nullptr, workers);
    try {
      return run_layout(s, &comm, workers);
    } catch (const std::exception& e) {
      // The other ranks may be waiting for this one in a collective (or have failed alike):
      // end them all rather than hang in MPI_Finalize.
      std::fprintf(stderr, "euler2d: rank %d: %s\n", comm.rank(), e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  }
#endif
  return run_layout(s, nullptr, tessera::ExecutorOptions{});
} catch (const std::exception& e) {
  std::fprintf(stderr, "euler2d: %s\n", e.what());
  return 1;
}
