#include "euler2d/problems.hpp"

#include <tessera/core/error.hpp>

#include <cmath>
#include <string>

namespace euler2d {

Problem shock_bubble(const ShockBubble& c) {
  if (c.nx == 0 || c.ny == 0 || !(c.width > 0))
    throw tessera::Error("shock_bubble: the grid is " + std::to_string(c.nx) + " x " + std::to_string(c.ny) +
                         " cells over a width of " + std::to_string(c.width) + "; all must be positive");
  Problem p;
  p.name = c.with_bubble ? "shock-bubble" : "planar shock";
  p.nx = c.nx;
  p.ny = c.ny;
  p.h = c.width / static_cast<double>(c.nx);
  p.gamma = c.gamma;
  p.t_final = c.t_final;
  p.boundary = c.boundary;
  p.initial = [c](double x, double y) {
    if (x < c.shock_x) return c.post_shock;
    const double dx = x - c.bubble_x, dy = y - c.bubble_y;
    if (c.with_bubble && dx * dx + dy * dy < c.bubble_radius * c.bubble_radius)
      return Primitive<double>{c.bubble_density, c.ambient.u, c.ambient.v, c.bubble_pressure};
    return c.ambient;
  };
  return p;
}

RiemannTest toro_riemann_test(int k) {
  // Toro, Riemann Solvers and Numerical Methods for Fluid Dynamics, Table 4.1 (gamma = 1.4).
  switch (k) {
    case 1:
      return {{1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 0.5, 0.25};
    case 2:
      return {{1.0, -2.0, 0.4}, {1.0, 2.0, 0.4}, 0.5, 0.15};
    case 3:
      return {{1.0, 0.0, 1000.0}, {1.0, 0.0, 0.01}, 0.5, 0.012};
    case 4:
      return {{1.0, 0.0, 0.01}, {1.0, 0.0, 100.0}, 0.5, 0.035};
    case 5:
      return {{5.99924, 19.5975, 460.894}, {5.99242, -6.19633, 46.095}, 0.5, 0.035};
    default:
      throw tessera::Error("toro_test: test " + std::to_string(k) + " does not exist; Toro's tests are 1 to 5");
  }
}

Problem riemann_problem(const std::string& name, const RiemannTest& t, Axis axis, std::size_t n, std::size_t transverse,
                        double gamma) {
  if (n == 0 || transverse == 0)
    throw tessera::Error("riemann_problem: " + std::to_string(n) + " cells along and " + std::to_string(transverse) +
                         " across; both must be positive");
  Problem p;
  p.name = name + (axis == Axis::x ? " along x" : " along y");
  p.nx = axis == Axis::x ? n : transverse;
  p.ny = axis == Axis::x ? transverse : n;
  p.h = 1.0 / static_cast<double>(n);
  p.gamma = gamma;
  p.t_final = t.t_final;
  p.boundary = Boundary::transmissive;
  p.initial = [t, axis](double x, double y) {
    const double s = axis == Axis::x ? x : y;
    const GasState& w = s < t.x0 ? t.left : t.right;
    return axis == Axis::x ? Primitive<double>{w.rho, w.u, 0.0, w.p} : Primitive<double>{w.rho, 0.0, w.u, w.p};
  };
  return p;
}

Problem toro_test(int k, Axis axis, std::size_t n, std::size_t transverse) {
  return riemann_problem("Toro test " + std::to_string(k), toro_riemann_test(k), axis, n, transverse);
}

RestartClock restart_clock(const std::string& path, double time, std::int64_t step,
                           std::optional<std::int64_t> saved_problem, std::int64_t problem, double t_final) {
  const std::string where = "checkpoint '" + path + "'";
  if (step < 0)
    throw tessera::Error(where + " says step " + std::to_string(step) +
                         "; a step count is never negative (a corrupt or foreign checkpoint?)");
  if (!std::isfinite(time) || time < 0)
    throw tessera::Error(where + " says t = " + std::to_string(time) + "; a time must be finite and not negative");
  if (time >= t_final)
    throw tessera::Error(where + " is at t = " + std::to_string(time) + ", not before t_final = " +
                         std::to_string(t_final) + ": there is nothing left to run (pass a later --t-final)");
  if (saved_problem && *saved_problem != problem)
    throw tessera::Error(where +
                         " was saved from another problem than the one asked for; restart it with the "
                         "--problem (and --axis) it was saved from");
  return RestartClock{time, static_cast<std::size_t>(step)};
}

}  // namespace euler2d
