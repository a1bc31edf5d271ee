#pragma once
// EulerSolver<T, L>: the 2-D Euler equations by first-order FORCE with dimensional splitting
// (an x sweep, then a y sweep, with one time step from a CFL condition), on tensors of State<T>
// laid out as L and partitioned over the selected devices (by default one slab along y per
// device, as in Ripple §8). One step is Ripple's Listing 12 with the wavespeed reduction folded
// into the y sweep:
//
//   clock (dt from the max wavespeed, t += dt) -> boundary(in) -> x sweep in->out
//   -> boundary(out) -> y sweep out->in, which also reduces the new state's max wavespeed
//
// so the state is back in `in` after every step and no swap is needed, and a step reads the
// state twice instead of three times (a separate reduction read 32 of a step's 160 B a cell).
// The clock lives beside the state, in tensors of one site (the max wavespeed, dt, t, the step
// count): the y sweep reduces into one (reduce_into a tensor), a one-site kernel turns it into
// dt and advances t, and the sweeps read dt through tessera::uniform. So on a device nothing in
// a step waits for the host, and a graph of several steps (add_steps) runs them back to back;
// the host reads the clock only when asked (time(), steps(), finished()). The constructor and
// restore_clock() reduce the state once; whoever else writes it calls refresh_wavespeed().
//
//   tessera::DeviceSet devices = tessera::DeviceSet::select("sim:4:64MiB");
//   tessera::MemoryManager memory(devices);
//   tessera::Executor executor;
//   euler2d::EulerSolver<double, tessera::Strided> solver(memory, executor, euler2d::shock_bubble());
//   solver.run();                                        // to the problem's t_final
//   std::vector<euler2d::State<double>> cells = solver.gather();  // x fastest
//
// Across the ranks of an MPI run, every rank declares the same solver with options.ranks set
// (a tessera::dist::Communicator); each then holds and steps only its part of the grid, and the
// state is bit for bit the one a single process computes (the reduction is a max, and every
// other value depends only on neighbouring cells). gather(), check_finite() and primitives() are
// then collective: every rank must call them.

#include "euler2d/kernels.hpp"
#include "euler2d/problems.hpp"
#include "euler2d/state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/core/ranks.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace euler2d {

struct SolverOptions {
  /// dt = cfl * h / max(|u| + c, |v| + c); FORCE is monotone for cfl <= 1.
  double cfl = 0.9;
  /// Device partitions (x, y). Default: {1, P} with P the number of accelerators (1 without),
  /// capped at ny: slabs along y, so halos are whole rows copied between devices.
  std::optional<tessera::Extent<2>> partitions;
  /// The ranks the grid is spread over (a tessera::dist::Communicator, which must outlive the
  /// solver); null: this process holds all of it. Every rank must construct the solver alike.
  tessera::Ranks* ranks = nullptr;
  /// Ranks along (x, y); unset: chosen for the fewest halo sites (see rank_decomposition.hpp).
  std::optional<tessera::Extent<2>> rank_grid;
};

template <typename T, tessera::Layout L = tessera::Strided>
class EulerSolver {
 public:
  using value_type = T;
  using layout = L;
  using state_tensor = tessera::Tensor<State<T>, 2, L>;

  /// Allocates the state (padding 1) and its double buffer, and sets the problem's initial state
  /// at the cell centres.
  EulerSolver(tessera::MemoryManager& memory, tessera::Executor& executor, Problem problem, SolverOptions options = {})
      : executor_(executor),
        problem_(std::move(problem)),
        options_(checked(std::move(options), problem_, memory)),
        gas_{static_cast<T>(problem_.gamma)},
        h_(static_cast<T>(problem_.h)),
        in_(memory, extent(), tensor_options("state", 1)),
        out_(memory, extent(), tensor_options("state_half_step", 1)),
        wavespeed_(memory, one_site(), clock_options("max_wavespeed")),
        dt_(memory, one_site(), clock_options("dt")),
        time_(memory, one_site(), clock_options("time")),
        steps_(memory, one_site(), clock_options("steps")),
        failed_(memory, one_site(), clock_options("failed")) {
    initialise();
    set_clock(0.0, 0);
    refresh_wavespeed();
  }

  /// One time step (Ripple Listing 12, the reduction in the y sweep). At or past t_final, dt is
  /// 0 and the state does not change. Throws tessera::Error when the state has lost positivity.
  void step() {
    tessera::for_each(executor_, clock(), tessera::read_only(wavespeed_), tessera::write_only(dt_), time_, steps_,
                      failed_);
    set_boundary(in_);
    in_.exchange_padding(tessera::StencilShape::along({0}));  // each sweep reads along its own dimension
    tessera::for_each(executor_, Sweep<0, T>{gas_, h_}, tessera::read_only(in_), tessera::write_only(out_),
                      tessera::uniform(dt_));
    set_boundary(out_);
    out_.exchange_padding(tessera::StencilShape::along({1}));
    tessera::for_each(executor_, Sweep<1, T>{gas_, h_}, tessera::read_only(out_), tessera::write_only(in_),
                      tessera::uniform(dt_), tessera::reduce_into(wavespeed_, tessera::Max{}));
    check_clock();
  }

  /// Appends one step to a graph, as step() does it, so that `g.run_n(executor, n)` takes n
  /// steps and `g.run_until(executor, [&] { return solver.finished(); })` runs to t_final. The
  /// graph refers to this solver: keep it alive.
  ///
  ///   tessera::Graph g("euler step");
  ///   solver.add_step(g);
  ///   g.run_until(executor, [&] { return solver.finished(); }).get();
  void add_step(tessera::Graph& g) {
    g.then_split(clock(), tessera::read_only(wavespeed_), tessera::write_only(dt_), time_, steps_, failed_);
    add_boundary(g, in_);
    // Each sweep reads its neighbours along its own dimension only: only those faces move.
    g.then_split(Sweep<0, T>{gas_, h_}, tessera::concurrent_padded_access(in_, tessera::StencilShape::along({0})),
                 tessera::write_only(out_), tessera::uniform(dt_));
    add_boundary(g, out_);
    g.then_split(Sweep<1, T>{gas_, h_}, tessera::concurrent_padded_access(out_, tessera::StencilShape::along({1})),
                 tessera::write_only(in_), tessera::uniform(dt_), tessera::reduce_into(wavespeed_, tessera::Max{}));
  }
  /// Appends n steps (add_step n times): one run of the graph takes n steps, which on a device
  /// follow each other without the host, where one step a run waits for the host between
  /// steps. Steps past t_final change nothing (dt is 0), so a run may overshoot it.
  ///
  ///   tessera::Graph g("euler steps");
  ///   solver.add_steps(g, 16);
  ///   while (!solver.finished()) g.run(executor).get();
  void add_steps(tessera::Graph& g, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) add_step(g);
  }

  /// Reduces the largest wavespeed of the state as it is now. Steps keep it current themselves
  /// (the y sweep reduces it); call this after writing the state any other way than through
  /// restore_clock(), which calls it, or the next step's dt comes from the state before.
  ///
  ///   solver.state().fill_from(cells.data());  solver.refresh_wavespeed();
  void refresh_wavespeed() {
    tessera::ReductionResult<T> largest;
    tessera::reduce(executor_, in_, largest, tessera::Max{}, Wavespeed<T>{gas_});
    const T v = largest.value();
    wavespeed_.fill_from(&v);
  }

  /// Steps until t_final; returns the number of steps taken.
  std::size_t run() {
    const std::size_t before = steps();
    while (!finished()) step();
    return steps() - before;
  }
  /// At most n steps (fewer if t_final comes first).
  void run(std::size_t n) {
    for (std::size_t k = 0; k < n && !finished(); ++k) step();
  }

  /// Throws tessera::Error when a step met a largest wavespeed that is not positive and finite
  /// (the state has lost positivity), naming it, the time and the step; the clock stops there.
  void check_clock() const {
    if (read(failed_) == 0) return;
    throw tessera::Error("EulerSolver '" + problem_.name + "': the largest wavespeed is " +
                         std::to_string(static_cast<double>(max_wavespeed())) + " at t = " + std::to_string(time()) +
                         " (step " + std::to_string(steps()) +
                         "): the state has lost positivity; lower the CFL number or refine the grid");
  }

  // -- the pieces of a step -----------------------------------------------------------------

  /// The clock kernel (see AdvanceClock).
  AdvanceClock<T> clock() const { return AdvanceClock<T>{options_.cfl, problem_.h, problem_.t_final}; }
  /// Loads the outer padding of `t`: the ZeroGradientEdges kernel (transmissive) or Periodic.
  void set_boundary(state_tensor& t) {
    if (problem_.boundary == Boundary::periodic)
      t.load_boundary(tessera::Periodic{});
    else
      tessera::for_each(executor_, edges_only(), ZeroGradientEdges{}, t);
  }
  /// set_boundary(t) as graph nodes: the edge kernel per block, or one Periodic loader node.
  void add_boundary(tessera::Graph& g, state_tensor& t) {
    if (problem_.boundary == Boundary::periodic)
      g.then([&t] { t.load_boundary(tessera::Periodic{}); });
    else
      g.then_split(edges_only(), ZeroGradientEdges{}, t);
  }
  /// Sets the clock after state() was restored from a checkpoint taken at time t, step `steps`,
  /// and reduces the restored state's largest wavespeed (refresh_wavespeed()). Collective
  /// across ranks.
  ///
  ///   tessera::io::CheckpointScalars saved = tessera::io::load_checkpoint(path, solver.state());
  ///   solver.restore_clock(saved.real("time"), static_cast<std::size_t>(saved.integer("step")));
  void restore_clock(double t, std::size_t steps) {
    if (!(t >= 0) || !std::isfinite(t))
      throw tessera::Error("EulerSolver '" + problem_.name + "': restore_clock(" + std::to_string(t) +
                           ", ...): the time must be finite and non-negative");
    set_clock(t, steps);
    refresh_wavespeed();
  }

  // -- accessors --------------------------------------------------------------------------------

  // The clock, read from its tensors (each waits for the steps in flight to write it).
  double time() const { return read(time_); }
  /// Whether t has reached t_final. Throws tessera::Error when a step failed (check_clock).
  bool finished() const {
    check_clock();
    return time() >= problem_.t_final;
  }
  std::size_t steps() const { return static_cast<std::size_t>(read(steps_)); }
  /// The last step's dt (0 once t_final is reached).
  T dt() const { return read(dt_); }
  /// The largest wavespeed of the state, which the next step's dt comes from.
  T max_wavespeed() const { return read(wavespeed_); }
  const Problem& problem() const noexcept { return problem_; }
  const SolverOptions& options() const noexcept { return options_; }
  const IdealGas<T>& gas() const noexcept { return gas_; }
  T cell_width() const noexcept { return h_; }
  tessera::Executor& executor() const noexcept { return executor_; }
  /// The ranks the state is spread over, or null.
  tessera::Ranks* ranks() const noexcept { return options_.ranks; }

  /// The current state (the graph's `in`) and its half-step buffer (`out`).
  state_tensor& state() noexcept { return in_; }
  const state_tensor& state() const noexcept { return in_; }
  state_tensor& half_step() noexcept { return out_; }

  /// Every cell's state, x fastest (cell (i, j) at i + nx j). Collective across ranks.
  std::vector<State<T>> gather() const {
    std::vector<State<T>> cells(problem_.nx * problem_.ny);
    in_.gather_to(cells.data());
    return cells;
  }

  /// Throws tessera::Error when a cell holds a value that is not finite (NaN or infinite),
  /// naming the field, the first such cell (x fastest), how many more there are, and the step:
  /// a NaN spreads and a run would otherwise carry on, and write output, without saying so.
  ///
  ///   solver.check_finite();   // before each output and at the end
  /// Collective across ranks; every rank throws the same error.
  void check_finite() const { check_finite(gather()); }
  /// As check_finite(), on cells already gathered (so a caller that writes them gathers once).
  ///
  ///   const auto cells = solver.gather();  solver.check_finite(cells);  write(cells);
  void check_finite(const std::vector<State<T>>& cells) const {
    if (cells.size() != problem_.nx * problem_.ny)
      throw tessera::Error("EulerSolver '" + problem_.name + "': check_finite was given " +
                           std::to_string(cells.size()) + " cells; the grid has " +
                           std::to_string(problem_.nx * problem_.ny));
    const char* names[4] = {"density", "energy", "x-velocity", "y-velocity"};
    std::size_t bad = 0, first = 0;
    int field = -1;
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const State<T>& c = cells[k];
      const T v[4] = {c.density(), c.energy(), c.velocity()[0], c.velocity()[1]};
      int which = -1;
      for (int f = 0; f < 4 && which < 0; ++f)
        if (!std::isfinite(static_cast<double>(v[f]))) which = f;
      if (which < 0) continue;
      if (bad++ == 0) first = k, field = which;
    }
    if (bad == 0) return;
    const State<T>& c = cells[first];
    const T v[4] = {c.density(), c.energy(), c.velocity()[0], c.velocity()[1]};
    throw tessera::Error("EulerSolver '" + problem_.name + "': at step " + std::to_string(steps()) +
                         " (t = " + std::to_string(time()) + ") the " + names[field] + " of cell (" +
                         std::to_string(first % problem_.nx) + ", " + std::to_string(first / problem_.nx) + ") is " +
                         std::to_string(static_cast<double>(v[field])) + ", and " + std::to_string(bad - 1) +
                         " other cell(s) are not finite either");
  }
  /// Every cell's primitive state, in double, x fastest. Collective across ranks.
  std::vector<Primitive<double>> primitives() const {
    const std::vector<State<T>> cells = gather();
    std::vector<Primitive<double>> w(cells.size());
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const Primitive<T> p = gas_.primitive(cells[k]);
      w[k] = {static_cast<double>(p.rho), static_cast<double>(p.u), static_cast<double>(p.v), static_cast<double>(p.p)};
    }
    return w;
  }

 private:
  static SolverOptions checked(SolverOptions o, const Problem& p, tessera::MemoryManager& memory) {
    if (!(o.cfl > 0 && o.cfl <= 1))
      throw tessera::Error("EulerSolver: cfl is " + std::to_string(o.cfl) + "; FORCE needs 0 < cfl <= 1");
    if (p.nx == 0 || p.ny == 0 || !(p.h > 0) || !(p.gamma > 1) || !p.initial)
      throw tessera::Error("EulerSolver: problem '" + p.name + "' has " + std::to_string(p.nx) + " x " +
                           std::to_string(p.ny) + " cells of width " + std::to_string(p.h) + ", gamma " +
                           std::to_string(p.gamma) +
                           (p.initial ? "" : " and no initial state") +
                           "; it needs cells, a positive width, gamma > 1 and an initial state");
    if (o.rank_grid && o.ranks == nullptr)
      throw tessera::Error("EulerSolver: problem '" + p.name + "': a rank_grid was given without ranks to spread over");
    if (!o.partitions) {
      const std::size_t accelerators = memory.num_spaces() > 1 ? memory.num_spaces() - 1 : 1;
      o.partitions = tessera::Extent<2>{std::size_t{1}, std::min(accelerators, p.ny)};
    }
    return o;
  }
  tessera::Extent<2> extent() const { return tessera::Extent<2>{problem_.nx, problem_.ny}; }
  static tessera::Extent<1> one_site() { return tessera::Extent<1>{1}; }
  // Every rank keeps a clock of its own (they agree: the reduction is combined over ranks).
  static tessera::TensorOptions<1> clock_options(const char* name) { return tessera::TensorOptions<1>{}.named(name); }
  template <typename V>
  static V read(const tessera::Tensor<V, 1>& t) {
    V v{};
    t.gather_to(&v);
    return v;
  }
  void set_clock(double t, std::size_t steps) {
    const double count = static_cast<double>(steps), zero = 0;
    const T no_step = 0;
    time_.fill_from(&t);
    steps_.fill_from(&count);
    failed_.fill_from(&zero);
    dt_.fill_from(&no_step);
  }
  tessera::TensorOptions<2> tensor_options(const char* name, std::int64_t padding) const {
    tessera::TensorOptions<2> o;
    o.partitions = *options_.partitions;
    o.ranks = options_.ranks;
    if (options_.rank_grid) o.rank_grid = *options_.rank_grid;
    // Across ranks the wrapped cells live on other ranks: the halo exchange brings them.
    if (options_.ranks != nullptr && problem_.boundary == Boundary::periodic) o.periodic = {true, true};
    o.with_padding(padding).named(name);
    return o;
  }
  void initialise() {
    const IdealGas<double> gas{problem_.gamma};
    std::vector<State<T>> cells(problem_.nx * problem_.ny);
    for (std::size_t j = 0; j < problem_.ny; ++j)
      for (std::size_t i = 0; i < problem_.nx; ++i) {
        const double x = (static_cast<double>(i) + 0.5) * problem_.h, y = (static_cast<double>(j) + 0.5) * problem_.h;
        const Primitive<double> w = problem_.initial(x, y);
        if (!(w.rho > 0) || !(w.p > 0))
          throw tessera::Error("EulerSolver: problem '" + problem_.name + "' has density " + std::to_string(w.rho) +
                               " and pressure " + std::to_string(w.p) + " at (" + std::to_string(x) + ", " +
                               std::to_string(y) + "); both must be positive");
        cells[i + problem_.nx * j] = State<T>(static_cast<T>(w.rho), static_cast<T>(gas.conserved(w).e),
                                              {static_cast<T>(w.u), static_cast<T>(w.v)});
      }
    in_.fill_from(cells.data());
  }

  tessera::Executor& executor_;
  Problem problem_;
  SolverOptions options_;
  IdealGas<T> gas_;
  T h_;
  state_tensor in_;
  state_tensor out_;
  // The clock (one site each): the state's max wavespeed, the last step's dt, t, the steps
  // taken (a double: exact to 2^53) and whether a step failed (0 or 1).
  tessera::Tensor<T, 1> wavespeed_;
  tessera::Tensor<T, 1> dt_;
  tessera::Tensor<double, 1> time_;
  tessera::Tensor<double, 1> steps_;
  tessera::Tensor<double, 1> failed_;
};

}  // namespace euler2d
