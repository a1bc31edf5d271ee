#pragma once
// The Fast Iterative Method (Jeong & Whitaker 2008) for |grad phi| = 1 on [0, 1]^D with one
// source at the centre, data-parallel as on GPUs (Ripple §7.4): every site carries a SiteState
// instead of sitting in a list, and each iteration is two stencil kernels and a reduction over a
// padded tensor partitioned over the selected devices, run as a tessera::Graph with a
// conditional pass.
//
//   eikonal::Problem<2> problem;
//   problem.size = 256;                  // cells per side, h = 1 / 256
//   problem.band = 10;                   // solve where phi <= 10 h; farther sites stay +inf
//   problem.partitions = {1, 2};         // one partition per device, split along y
//   auto solution = eikonal::solve<double, 2, tessera::Strided>(memory, executor, problem);
//   eikonal::Errors e = eikonal::measure_errors(problem, solution.phi);
//
// One iteration (phi and next are two tensors of Cell<T> with padding 1):
//   activate  phi -> next: sites next to a site that converged last iteration re-solve; where
//             that lowers them (and stays inside the band) they become active. Converged sites
//             become idle.
//   update    next -> phi: active sites take min(phi, Godunov update); a site whose value moved
//             by no more than the tolerance converges.
//   busy      Sum over phi of (state != idle): the loop ends when no site is active or just
//             converged.
// Both kernels read neighbours through the padding (concurrent_padded_access: the graph puts
// halo-transfer nodes before each block's kernel; block b's kernels wait only for block b's and
// its neighbours' work, so partitions on different devices proceed independently). Reading one
// tensor and writing the other makes every site's update depend only on the previous sweep, so
// the result is the same for any partitioning, device set and Driver.

#include <tessera/core/error.hpp>
#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include "godunov.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace eikonal {

/// The problem: the grid, the band and the partitioning.
template <std::size_t D>
struct Problem {
  std::size_t size = 64;  ///< cells per side; the domain is [0, 1]^D, h = 1 / size
  std::size_t band = 10;  ///< phi is computed where it is at most band * h; beyond, it stays +inf
  tessera::Extent<D> partitions = tessera::Extent<D>::filled(1);  ///< device partitions per dimension

  double spacing() const { return 1.0 / static_cast<double>(size); }
  /// The source: the site size / 2 in every dimension (the exact centre when size is odd).
  tessera::Index<D> source() const { return tessera::Index<D>::filled(static_cast<std::int64_t>(size / 2)); }
  /// The band in cells, capped at the farthest a site can be from the source.
  std::size_t band_cells() const { return std::min(band, D * size); }
  /// The loop stops with an error past this many iterations. The front advances one site per
  /// iteration along each axis, so reaching every site of the band takes about D * band
  /// iterations (its Manhattan radius); re-activations behind the front add a few percent
  /// (measured: see tests/test_eikonal.cpp).
  std::size_t iteration_limit() const { return 4 * D * (band_cells() + 4); }
};

/// The converged field and what it took.
template <typename T>
struct Solution {
  std::vector<T> phi;  ///< every interior site, x fastest; +inf outside the band
  std::size_t iterations = 0;
  double seconds = 0;  ///< the Start kernel and the iterations (no allocation or gather)
};

/// Activation: see the top of this file.
template <typename T>
struct Activate {
  T step;        // h / f
  T band_limit;  // band * h
  T tolerance;
  template <typename In, typename Out>
  TESSERA_HOST_DEVICE void operator()(In in, Out out) const {
    T phi = (*in).phi();
    const std::int32_t state = (*in).state();
    std::int32_t next_state = state == SiteState::active ? SiteState::active : SiteState::idle;
    // A converged site is re-checked too: a neighbour may have converged to a lower value in the
    // same sweep it did.
    if (state != SiteState::active && next_to_converged(in)) {
      const T q = upwind_value<T>(in, step);
      if (q < phi - tolerance && q <= band_limit) {
        phi = q;
        next_state = SiteState::active;
      }
    }
    (*out).phi() = phi;
    (*out).state() = next_state;
  }
};

/// Update of the active list: see the top of this file.
template <typename T>
struct Update {
  T step;
  T tolerance;
  template <typename In, typename Out>
  TESSERA_HOST_DEVICE void operator()(In in, Out out) const {
    T phi = (*in).phi();
    std::int32_t state = (*in).state();
    if (state == SiteState::active) {
      const T q = upwind_value<T>(in, step);
      const T lowered = q < phi ? q : phi;  // values only decrease, so the loop terminates
      if (phi - lowered <= tolerance) state = SiteState::converged;
      phi = lowered;
    }
    (*out).phi() = phi;
    (*out).state() = state;
  }
};

/// 1 where a site is active or just converged, for the convergence reduction.
struct IsBusy {
  template <typename It>
  TESSERA_HOST_DEVICE std::int64_t operator()(const It& it) const {
    return (*it).state() != SiteState::idle ? 1 : 0;
  }
};

/// Start: the source at 0 and converged (its neighbours activate first), every other site far
/// and idle, in both tensors.
template <typename T>
struct Start {
  std::int64_t centre;  // the source's index in every dimension
  T far;                // +inf
  template <typename A, typename B>
  TESSERA_HOST_DEVICE void operator()(A phi, B next) const {
    bool source = true;
    tessera::unrolled_for<A::dims>([&](auto d) { source = source && phi.global_idx(d) == centre; });
    (*phi).phi() = source ? T(0) : far;
    (*phi).state() = source ? SiteState::converged : SiteState::idle;
    (*next).phi() = far;
    (*next).state() = SiteState::idle;
  }
};

/// How solve runs the iterations: as a tessera::Graph with a conditional pass (the default), or
/// as the same operations called directly from a host loop (the reference the graph is tested
/// against).
enum class Driver { graph, direct };

/// The kernels of one problem.
template <typename T>
struct Kernels {
  Start<T> start;
  Activate<T> activate;
  Update<T> update;
};

/// Driver::graph: Start once, then iterations while a site is busy and fewer than `limit` ran.
/// Returns the iterations; `busy` holds the last count of busy sites.
template <typename T, typename Tn>
std::size_t run_graph(tessera::Executor& executor, Tn& phi, Tn& next, const Kernels<T>& kernels, std::size_t limit,
                      tessera::ReductionResult<std::int64_t>& busy) {
  const auto [start, activate, update] = kernels;
  std::size_t iterations = 0;
  // DOC eikonal-graph begin
  const auto star = tessera::StencilShape::star();  // both kernels read along the axes: faces only
  tessera::Graph fim("fim"), iterate("fim iteration");
  fim.split(start, phi, next).named("start");
  iterate.split(activate, tessera::concurrent_padded_access(phi, star), next).named("activate")
      .then_split(update, tessera::concurrent_padded_access(next, star), phi).named("update")
      .then_reduce(phi, busy, tessera::Sum{}, IsBusy{}).named("busy")
      .conditional([&] { return ++iterations < limit && busy.value() > 0; });
  fim.then(iterate);  // start once, then iterate while a site is busy
  fim.run(executor).get();
  // DOC eikonal-graph end
  return iterations;
}

/// Driver::direct: the same operations called from a host loop.
template <typename T, typename Tn>
std::size_t run_direct(tessera::Executor& executor, Tn& phi, Tn& next, const Kernels<T>& kernels,
                       std::size_t limit, tessera::ReductionResult<std::int64_t>& busy) {
  const auto [start, activate, update] = kernels;
  std::size_t iterations = 0;
  // DOC eikonal-loop begin
  const auto star = tessera::StencilShape::star();
  tessera::for_each(executor, start, phi, next);
  do {
    phi.exchange_padding(star);  // neighbours' phi and state for the activation stencil
    tessera::for_each(executor, activate, phi, next);
    next.exchange_padding(star);  // and for the update stencil
    tessera::for_each(executor, update, next, phi);
    busy.reset();
    tessera::reduce(executor, phi, busy, tessera::Sum{}, IsBusy{});
  } while (++iterations < limit && busy.value() > 0);
  // DOC eikonal-loop end
  return iterations;
}

/// Solves the Problem with FIM on tensors of Cell<T> in layout L, on the devices of `memory`
/// (partitions round-robin over its accelerators, the host when there is none). Throws
/// tessera::Error for an empty grid, more partitions than cells, or a loop that does not end
/// within problem.iteration_limit().
template <typename T, std::size_t D, tessera::Layout L>
Solution<T> solve(tessera::MemoryManager& memory, tessera::Executor& executor, const Problem<D>& problem,
                  Driver driver = Driver::graph) {
  if (problem.size == 0) throw tessera::Error("eikonal: the grid size is 0; pass at least 1 cell per side");
  tessera::TensorOptions<D> options;
  options.partitions = problem.partitions;
  options.with_padding(1);
  const tessera::Extent<D> n = tessera::Extent<D>::filled(problem.size);
  tessera::Tensor<Cell<T>, D, L> phi(memory, n, tessera::TensorOptions<D>(options).named("phi"));
  tessera::Tensor<Cell<T>, D, L> next(memory, n, tessera::TensorOptions<D>(options).named("phi next"));

  // The domain's outer padding is far and idle for good: kernels write only interiors and halo
  // exchanges only inner padding. Start then sets the interiors where they live.
  const T far = std::numeric_limits<T>::infinity();
  phi.fill(Cell<T>(far, SiteState::idle));
  next.fill(Cell<T>(far, SiteState::idle));
  const T h = static_cast<T>(problem.spacing());
  const T band_limit = static_cast<T>(problem.band_cells()) * h;
  // Changes below a few rounding errors of the largest value in the band are noise, not
  // information: ignoring them keeps float runs from re-activating sites over the last ulp.
  const T tolerance = T(16) * std::numeric_limits<T>::epsilon() * (band_limit > h ? band_limit : h);
  const Kernels<T> kernels{Start<T>{problem.source().coords[0], far}, Activate<T>{h, band_limit, tolerance},
                          Update<T>{h, tolerance}};
  tessera::ReductionResult<std::int64_t> busy;
  const std::size_t limit = problem.iteration_limit();

  Solution<T> solution;
  const auto t0 = std::chrono::steady_clock::now();
  solution.iterations = driver == Driver::graph ? run_graph(executor, phi, next, kernels, limit, busy)
                                                : run_direct(executor, phi, next, kernels, limit, busy);
  solution.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (busy.value() > 0)
    throw tessera::Error("eikonal: FIM did not converge within " + std::to_string(limit) + " iterations (size " +
                         std::to_string(problem.size) + ", band " + std::to_string(problem.band) +
                         "); the front should settle in about sqrt(D) * band: please report this");

  std::vector<Cell<T>> cells(n.volume());
  phi.gather_to(cells.data());
  solution.phi.resize(cells.size());
  for (std::size_t k = 0; k < cells.size(); ++k) solution.phi[k] = cells[k].phi();
  return solution;
}

/// Errors against the exact distance |x - source|, in units of the domain.
struct Errors {
  double max = 0;              ///< max |phi - exact| over computed (finite) sites
  double mean = 0;             ///< mean |phi - exact| over computed sites (a normalised L1 error)
  std::size_t computed = 0;    ///< sites with a finite phi
  std::size_t missing = 0;     ///< sites within band * h - max of the source left at +inf
  std::size_t beyond_band = 0; ///< computed sites with phi > band * h (must be 0)
};

/// The exact distance of site k (x fastest) from the source.
template <std::size_t D>
double exact_distance(const Problem<D>& problem, std::size_t k) {
  double r2 = 0;
  for (std::size_t d = 0; d < D; ++d, k /= problem.size) {
    const double c = static_cast<double>(k % problem.size) - static_cast<double>(problem.size / 2);
    r2 += c * c;
  }
  return std::sqrt(r2) * problem.spacing();
}

/// The largest max error the app and the tests accept. For a point source the first-order
/// Godunov scheme is O(h log(1/h)), not O(h): the error is made near the source, where phi is
/// not smooth, and carried outward. Measured with double (the band at size / 2 - 1 cells):
/// max / h = 0.82, 1.04, 1.27, 1.50 for 2-D sizes 32..256 (+0.33 ln 2 per doubling) and
/// 0.95, 1.32, 1.70 for 3-D sizes 16..64 (+0.54 ln 2). The bound takes coefficients 0.5 (2-D)
/// and 0.75 (3-D) on ln(band + 1), plus one cell, so it holds with room at every size.
template <std::size_t D>
double error_bound(const Problem<D>& problem) {
  const double cells = static_cast<double>(problem.band_cells());
  return problem.spacing() * (1.0 + 0.25 * static_cast<double>(D) * std::log(cells + 1.0));
}

/// Compares `phi` (every site, x fastest) with the exact distance. A site within
/// band * h - max of the source must be computed: its discrete value is at most
/// exact + max <= band * h.
template <std::size_t D, typename T>
Errors measure_errors(const Problem<D>& problem, const std::vector<T>& phi) {
  Errors e;
  double sum = 0;
  const double band = static_cast<double>(problem.band_cells()) * problem.spacing();
  for (std::size_t k = 0; k < phi.size(); ++k) {
    if (!std::isfinite(phi[k])) continue;
    const double err = std::fabs(static_cast<double>(phi[k]) - exact_distance(problem, k));
    e.max = std::max(e.max, err);
    sum += err;
    ++e.computed;
    // The activation test compares in T; allow its rounding.
    if (static_cast<double>(phi[k]) > band * (1 + 4 * std::numeric_limits<T>::epsilon())) ++e.beyond_band;
  }
  e.mean = e.computed > 0 ? sum / static_cast<double>(e.computed) : 0;
  for (std::size_t k = 0; k < phi.size(); ++k)
    if (!std::isfinite(phi[k]) && exact_distance(problem, k) <= band - e.max) ++e.missing;
  return e;
}

}  // namespace eikonal
