#pragma once
// The exact solution of the Riemann problem for the 1-D Euler equations of an ideal gas
// (Toro, Riemann Solvers and Numerical Methods for Fluid Dynamics, ch. 4): the star region by a
// Newton iteration on the pressure function (§4.2-4.3), and the whole self-similar wave pattern,
// rarefaction fans included, sampled at x/t (§4.5). Vacuum is not handled: a pair of states
// that would create one is an error. The validation tests of the Euler app compare the FORCE
// scheme against it.
//
//   euler2d::GasState left{1.0, 0.0, 1.0}, right{0.125, 0.0, 0.1};  // Sod: rho, u, p
//   euler2d::StarState s = euler2d::star_state(left, right, 1.4);     // s.p ~ 0.30313
//   euler2d::GasState w = euler2d::sample(left, right, 1.4, (x - 0.5) / t);

namespace euler2d {

/// A 1-D primitive state: density, velocity, pressure.
struct GasState {
  double rho = 0;
  double u = 0;
  double p = 0;
};

/// The star region between the left and right waves: pressure and velocity (continuous across
/// the contact) and the density on each side of the contact.
struct StarState {
  double p = 0;
  double u = 0;
  double rho_l = 0;
  double rho_r = 0;
  int iterations = 0;  ///< Newton iterations taken
};

/// p*, u*, rho*L and rho*R for the Riemann problem (left | right) in a gas with ratio of
/// specific heats `gamma`. Throws tessera::Error for non-positive densities or pressures, when
/// the data generate vacuum (Toro eq. 4.40), or if Newton does not converge.
StarState star_state(const GasState& left, const GasState& right, double gamma);

/// The solution at x/t = `x_over_t` (the diaphragm at x = 0, t > 0), given the star state.
GasState sample(const GasState& left, const GasState& right, double gamma, const StarState& star, double x_over_t);

/// As above, solving for the star state first (call star_state once when sampling many points).
GasState sample(const GasState& left, const GasState& right, double gamma, double x_over_t);

}  // namespace euler2d
