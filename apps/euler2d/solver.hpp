#pragma once
// EulerSolver<T, L>: the 2-D Euler equations by first-order FORCE with dimensional splitting
// (an x sweep, then a y sweep, with one time step from a CFL condition), on tensors of State<T>
// laid out as L and partitioned over the selected devices (by default one slab along y per
// device, as in Ripple §8). One step is Ripple's Listing 12 with the wavespeed reduction folded
// into the y sweep:
//
//   dt (from the max wavespeed) -> boundary(in) -> x sweep in->out -> boundary(out)
//   -> y sweep out->in, which also reduces the new state's max wavespeed for the next step
//
// so the state is back in `in` after every step and no swap is needed, and a step reads the
// state twice instead of three times (a separate reduction read 32 of a step's 160 B a cell,
// and on a GPU put a second round trip to the host in every step). The constructor and
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
        out_(memory, extent(), tensor_options("state_half_step", 1)) {
    initialise();
    refresh_wavespeed();
  }

  /// One time step (Ripple Listing 12, the reduction in the y sweep). Past t_final, dt is 0 and
  /// the state does not change.
  void step() {
    set_dt();
    set_boundary(in_);
    in_.exchange_padding(tessera::StencilShape::along({0}));  // each sweep reads along its own dimension
    tessera::for_each(executor_, Sweep<0, T>{gas_, h_}, tessera::read_only(in_), tessera::write_only(out_), dt_);
    set_boundary(out_);
    out_.exchange_padding(tessera::StencilShape::along({1}));
    tessera::for_each(executor_, Sweep<1, T>{gas_, h_}, tessera::read_only(out_), tessera::write_only(in_), dt_,
                      tessera::reduce_into(max_wavespeed_, tessera::Max{}));
    finish_step();
  }

  /// Appends one step to a graph, as step() does it, so that `g.run_n(executor, n)` takes n
  /// steps and `g.run_until(executor, [&] { return solver.finished(); })` runs to t_final. The
  /// graph refers to this solver: keep it alive.
  ///
  ///   tessera::Graph g("euler step");
  ///   solver.add_step(g);
  ///   g.run_until(executor, [&] { return solver.finished(); }).get();
  void add_step(tessera::Graph& g) {
    g.then([this] { set_dt(); });
    add_boundary(g, in_);
    // Each sweep reads its neighbours along its own dimension only: only those faces move.
    g.then_split(Sweep<0, T>{gas_, h_}, tessera::concurrent_padded_access(in_, tessera::StencilShape::along({0})),
                 tessera::write_only(out_), std::cref(dt_));
    add_boundary(g, out_);
    g.then_split(Sweep<1, T>{gas_, h_}, tessera::concurrent_padded_access(out_, tessera::StencilShape::along({1})),
                 tessera::write_only(in_), std::cref(dt_), tessera::reduce_into(max_wavespeed_, tessera::Max{}))
        .then([this] { finish_step(); });
  }

  /// Reduces the largest wavespeed of the state as it is now. Steps keep it current themselves
  /// (the y sweep reduces it); call this after writing the state any other way than through
  /// restore_clock(), which calls it, or the next step's dt comes from the state before.
  ///
  ///   solver.state().fill_from(cells.data());  solver.refresh_wavespeed();
  void refresh_wavespeed() { tessera::reduce(executor_, in_, max_wavespeed_, tessera::Max{}, Wavespeed<T>{gas_}); }

  /// Steps until t_final; returns the number of steps taken.
  std::size_t run() {
    const std::size_t before = steps_;
    while (!finished()) step();
    return steps_ - before;
  }
  /// At most n steps (fewer if t_final comes first).
  void run(std::size_t n) {
    for (std::size_t k = 0; k < n && !finished(); ++k) step();
  }

  // -- the pieces of a step, for a tessera::Graph (plain nodes) -------------------------------

  /// dt = min(cfl h / max wavespeed, t_final - t), from the completed reduction.
  void set_dt() {
    const double ws = static_cast<double>(max_wavespeed_.value());
    if (!(ws > 0) || !std::isfinite(ws))
      throw tessera::Error("EulerSolver '" + problem_.name + "': the largest wavespeed is " + std::to_string(ws) +
                           " at t = " + std::to_string(t_) + " (step " + std::to_string(steps_) +
                           "): the state has lost positivity; lower the CFL number or refine the grid");
    const double remaining = problem_.t_final - t_;
    double dt = options_.cfl * problem_.h / ws;
    last_step_ = dt >= remaining;
    if (last_step_) dt = std::max(remaining, 0.0);
    dt_ = static_cast<T>(dt);
  }
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
  /// Advances the clock by the step's dt (to exactly t_final on the last step).
  void finish_step() {
    t_ = last_step_ ? std::max(t_, problem_.t_final) : t_ + static_cast<double>(dt_);
    ++steps_;
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
    t_ = t;
    steps_ = steps;
    last_step_ = false;
    refresh_wavespeed();
  }

  // -- accessors --------------------------------------------------------------------------------

  double time() const noexcept { return t_; }
  bool finished() const noexcept { return t_ >= problem_.t_final; }
  std::size_t steps() const noexcept { return steps_; }
  /// The last step's dt (a reference, so a graph node can take std::cref(solver.dt())).
  const T& dt() const noexcept { return dt_; }
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
  tessera::ReductionResult<T>& max_wavespeed() noexcept { return max_wavespeed_; }

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
    throw tessera::Error("EulerSolver '" + problem_.name + "': at step " + std::to_string(steps_) +
                         " (t = " + std::to_string(t_) + ") the " + names[field] + " of cell (" +
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
  tessera::ReductionResult<T> max_wavespeed_;
  T dt_ = 0;
  double t_ = 0;
  bool last_step_ = false;
  std::size_t steps_ = 0;
};

}  // namespace euler2d
