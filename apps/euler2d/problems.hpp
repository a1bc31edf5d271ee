#pragma once
// The initial-boundary value problems the Euler app solves: the shock-bubble interaction
// (Ripple §8, Figure 11), the planar Mach 2.95 shock on its own, and Toro's five chapter-4
// Riemann problems laid along x or y. A Problem is data: a grid of square cells, a gas, an end
// time, boundary conditions, and the primitive state at each cell centre.
//
//   euler2d::ShockBubble config;              // gamma 1.4, [0, 1]^2, t_final 0.4
//   config.nx = config.ny = 200;
//   euler2d::Problem p = euler2d::shock_bubble(config);
//   euler2d::Problem sod = euler2d::toro_test(1, euler2d::Axis::y, 400);  // 4 x 400 cells

#include "euler2d/exact_riemann.hpp"
#include "euler2d/state.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace euler2d {

enum class Boundary {
  transmissive,  ///< zero gradient across every face of the domain (waves leave)
  periodic,      ///< the domain wraps around in both dimensions
};

enum class Axis { x, y };

struct Problem {
  std::string name;
  std::size_t nx = 0;  ///< cells along x
  std::size_t ny = 0;  ///< cells along y
  double h = 0;        ///< cell width (cells are square: the domain is [0, nx h] x [0, ny h])
  double gamma = 1.4;
  double t_final = 0;
  Boundary boundary = Boundary::transmissive;
  /// The primitive state at a point; the solver samples it at cell centres.
  std::function<Primitive<double>(double x, double y)> initial;
};

/// The shock-bubble interaction: a planar shock at x = shock_x moving in +x into gas at rest,
/// which holds a circular bubble of light gas at the same pressure.
struct ShockBubble {
  std::size_t nx = 400, ny = 400;
  double width = 1.0;  ///< domain length along x; h = width / nx
  double gamma = 1.4;
  double t_final = 0.4;
  double shock_x = 0.2;
  /// Gas ahead of the shock (x > shock_x) and behind it: Mach 2.95 into rho = 1, p = 1.
  Primitive<double> ambient{1.0, 0.0, 0.0, 1.0};
  Primitive<double> post_shock{3.81062, 2.5745, 0.0, 9.98625};
  bool with_bubble = true;
  double bubble_x = 0.4, bubble_y = 0.5, bubble_radius = 0.2;
  double bubble_density = 0.1, bubble_pressure = 1.0;
  Boundary boundary = Boundary::transmissive;
};

Problem shock_bubble(const ShockBubble& config = {});

/// Toro's chapter-4 test k (1-5): the data, diaphragm and output time of Table 4.1.
struct RiemannTest {
  GasState left, right;
  double x0 = 0.5;
  double t_final = 0;
};
RiemannTest toro_riemann_test(int k);

/// Test k on [0, 1] with n cells along `axis` and `transverse` cells across it (the data do
/// not vary across, so the solution is 1-D), transmissive boundaries. Throws for k outside 1-5.
Problem toro_test(int k, Axis axis, std::size_t n, std::size_t transverse = 4);

/// As toro_test, for any Riemann problem.
Problem riemann_problem(const std::string& name, const RiemannTest& test, Axis axis, std::size_t n,
                        std::size_t transverse = 4, double gamma = 1.4);

/// Where a restart continues: the time and step a checkpoint recorded.
struct RestartClock {
  double time = 0;
  std::size_t step = 0;
};

/// The clock a checkpoint's scalars give, checked: the step is not negative, the time finite, not
/// negative and before `t_final`, and the problem (`problem`, recorded by tessera-euler2d; absent
/// in older checkpoints) the one being run. Throws tessera::Error naming `path` otherwise.
RestartClock restart_clock(const std::string& path, double time, std::int64_t step,
                           std::optional<std::int64_t> saved_problem, std::int64_t problem, double t_final);

}  // namespace euler2d
