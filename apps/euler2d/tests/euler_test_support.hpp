#pragma once
// Shared by the Euler validation tests: running a 1-D Riemann problem through the 2-D solver and
// measuring its L1 error against the exact solution.

#include "euler2d/exact_riemann.hpp"
#include "euler2d/problems.hpp"
#include "euler2d/solver.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace euler_test {

struct L1Error {
  double rho = 0, u = 0, p = 0;
  std::size_t steps = 0;
};

/// The L1 error (sum |q - q_exact| h, over [0, 1]) of density, normal velocity and pressure of
/// a Riemann problem at its t_final, along `axis`, every transverse row included (averaged).
template <typename T, typename L = tessera::Strided>
L1Error riemann_l1_error(const euler2d::RiemannTest& test, euler2d::Axis axis, std::size_t n,
                         const char* devices = "host") {
  tessera::DeviceSet set = tessera::DeviceSet::select(devices);
  tessera::MemoryManager memory(set);
  tessera::Executor executor;
  const std::size_t transverse = 4;
  euler2d::EulerSolver<T, L> solver(memory, executor, euler2d::riemann_problem("riemann", test, axis, n, transverse));
  L1Error e;
  e.steps = solver.run();
  const std::vector<euler2d::Primitive<double>> w = solver.primitives();
  const euler2d::StarState star = euler2d::star_state(test.left, test.right, 1.4);
  const double h = 1.0 / static_cast<double>(n);
  for (std::size_t a = 0; a < n; ++a) {
    const double x = (static_cast<double>(a) + 0.5) * h;
    const euler2d::GasState exact = euler2d::sample(test.left, test.right, 1.4, star, (x - test.x0) / test.t_final);
    for (std::size_t b = 0; b < transverse; ++b) {
      const euler2d::Primitive<double>& c = axis == euler2d::Axis::x ? w[a + n * b] : w[b + transverse * a];
      const double un = axis == euler2d::Axis::x ? c.u : c.v;
      e.rho += std::fabs(c.rho - exact.rho) * h / transverse;
      e.u += std::fabs(un - exact.u) * h / transverse;
      e.p += std::fabs(c.p - exact.p) * h / transverse;
    }
  }
  memory.synchronize();
  return e;
}

}  // namespace euler_test
