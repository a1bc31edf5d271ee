#pragma once
// The hand-written baseline of SUITE=graph: the Euler shock-bubble step of apps/euler2d (first-
// order FORCE, an x sweep then a y sweep, zero-gradient boundaries, dt from a max-wavespeed
// reduction folded into the y sweep and the CFL number) in double, on structure-of-arrays fields with one padding cell,
// rows shared out with `#pragma omp parallel for` and each row vectorised with `#pragma omp simd`
// (the suite prints the compiler's verdict on each loop at start-up). It shares no code with the
// solver (only the Problem, for the initial state), so agreeing with it also checks the solver.
// FieldLayout::aos keeps each cell's four values together instead (one array of cells, as the
// solver's Contiguous layout does), with the same loops and arithmetic: what a skilled engineer
// writes for that layout, so that tessera's Contiguous step has a baseline of its own layout.
//
//   tessera::bench::EulerBaseline base(euler2d::shock_bubble(config), 0.9);
//   base.run(10);
//   std::vector<double> rho = base.density();  // x fastest, interior only

#include "euler2d/problems.hpp"

#include <cstddef>
#include <vector>

namespace tessera::bench {

/// How the baseline stores its four fields: four arrays, or one array of four-value cells.
enum class FieldLayout { soa, aos };

class EulerBaseline {
 public:
  EulerBaseline(const euler2d::Problem& problem, double cfl, FieldLayout layout = FieldLayout::soa);
  EulerBaseline(const EulerBaseline&) = delete;  // the fields point into storage_
  EulerBaseline& operator=(const EulerBaseline&) = delete;

  /// One step: dt from the largest wavespeed, boundary(in), x sweep in->out, boundary(out), y
  /// sweep out->in, which also reduces the new state's largest wavespeed for the next step (a
  /// separate reduction before the first step only), as the solver does.
  void step();
  void run(std::size_t n) {
    for (std::size_t k = 0; k < n && t_ < t_final_; ++k) step();
  }
  double time() const noexcept { return t_; }
  std::size_t steps() const noexcept { return steps_; }
  /// The interior density, x fastest.
  std::vector<double> density() const;

  /// Whether this file was compiled with OpenMP (otherwise the baseline is serial).
  static bool have_openmp();
  static int threads();

 private:
  // (nx + 2) x (ny + 2) cells, x fastest; cell k's values at rho[k * S], e[k * S], ... with S = 1
  // (four arrays) or 4 (one array of cells: rho = cells, e = cells + 1, ...).
  struct Fields {
    double *rho, *e, *u, *v;
  };
  template <std::ptrdiff_t S>
  void step_with();
  template <std::ptrdiff_t S>
  void boundary(Fields& f) const;
  /// Returns the largest wavespeed of what it wrote (the y sweep; 0 for x).
  template <int Dim, std::ptrdiff_t S>
  double sweep(const Fields& in, Fields& out, double dt) const;
  template <std::ptrdiff_t S>
  double max_wavespeed() const;

  FieldLayout layout_;

  std::size_t nx_, ny_, stride_;
  double h_, gamma_, cfl_, t_final_;
  // All eight fields (or both arrays of cells) in one block, each starting 17 cache lines further
  // on modulo 4 KiB than the one before. Allocated separately, every large array started 16 bytes past a page, so x
  // loads of one field and stores to another 4 KiB apart aliased (a load waits on a store whose
  // address it cannot tell apart by the low 12 bits); how slow that made a step (1.5 or 1.8 ms
  // at 512^2) depended on where the allocator put each vector.
  std::vector<double> storage_;
  Fields in_, out_;
  double t_ = 0;
  double wavespeed_ = 0;  ///< of the current state
  std::size_t steps_ = 0;
};

}  // namespace tessera::bench
