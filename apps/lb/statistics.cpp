#include "statistics.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

namespace lb {

namespace {

// Kahan-compensated sum, as Ludwig sums momentum (a naive sum of terms that cancel leaves
// round-off of 1e-13 behind).
struct KahanSum {
  double sum = 0, correction = 0;
  void add(double x) {
    const double y = x - correction;
    const double t = sum + y;
    correction = (t - sum) - y;
    sum = t;
  }
};

}  // namespace

double surface_tension(const Parameters& p) { return std::sqrt(-8.0 * p.kappa * p.a * p.a * p.a / (9.0 * p.b * p.b)); }
double interfacial_width(const Parameters& p) { return std::sqrt(-2.0 * p.kappa / p.a); }

Statistics compute_statistics(const Snapshot& snap, const Geometry& geo, const Parameters& par) {
  const std::size_t ns = geo.nsites;
  Statistics st;
  st.time = snap.time;
  st.lattice_volume = static_cast<double>(geo.interior_volume());

  // Density: sum of the 19 populations, one pass (S2/V - mean^2, as Ludwig).
  {
    double v = 0, s = 0, s2 = 0, mn = DBL_MAX, mx = -DBL_MAX;
    geo.for_each_interior([&](int i, int j, int k, std::size_t site) {
      if (geo.solid(i, j, k)) return;
      double rho = 0;
      for (int p = 0; p < nvel; ++p) rho += snap.f[p * ns + site];
      v += 1.0;
      s += rho;
      s2 += rho * rho;
      mn = std::min(mn, rho);
      mx = std::max(mx, rho);
    });
    const double mean = s / v;
    st.rho = {s, mean, std::fabs(s2 / v - mean * mean), mn, mx};
    st.fluid_volume = v;
  }
  // Order parameter: phi = sum of the g populations.
  std::vector<double> phi(ns, 0.0);
  {
    double v = 0, s = 0, s2 = 0, mn = DBL_MAX, mx = -DBL_MAX;
    geo.for_each_interior([&](int i, int j, int k, std::size_t site) {
      double q = 0;
      for (int p = 0; p < nvel; ++p) q += snap.g[p * ns + site];
      phi[site] = q;
      if (geo.solid(i, j, k)) return;
      v += 1.0;
      s += q;
      s2 += q * q;
      mn = std::min(mn, q);
      mx = std::max(mx, q);
    });
    const double rvol = 1.0 / v;
    const double mean = rvol * s;
    st.phi = {s, mean, rvol * s2 - mean * mean, mn, mx};
  }
  // Free energy density with the new phi and the gradients from the start of the last step.
  geo.for_each_interior([&](int i, int j, int k, std::size_t site) {
    if (geo.solid(i, j, k)) return;
    const double p = phi[site];
    const double gx = snap.grad[site], gy = snap.grad[ns + site], gz = snap.grad[2 * ns + site];
    st.free_energy += (0.5 * par.a + 0.25 * par.b * p * p) * p * p + 0.5 * par.kappa * (gx * gx + gy * gy + gz * gz);
  });
  // Momentum of the fluid, and what the walls took up.
  KahanSum m[3];
  geo.for_each_interior([&](int i, int j, int k, std::size_t site) {
    if (geo.solid(i, j, k)) return;
    for (int p = 1; p < nvel; ++p)
      for (int a = 0; a < 3; ++a) m[a].add(snap.f[p * ns + site] * cv[p][a]);
  });
  for (int a = 0; a < 3; ++a) st.fluid_momentum[a] = m[a].sum;
  st.wall_momentum = snap.wall_momentum;
  // Velocity extremes of the last collision.
  for (int a = 0; a < 3; ++a) {
    st.velocity_min[a] = DBL_MAX;
    st.velocity_max[a] = -DBL_MAX;
  }
  geo.for_each_interior([&](int i, int j, int k, std::size_t site) {
    if (geo.solid(i, j, k)) return;
    for (int a = 0; a < 3; ++a) {
      st.velocity_min[a] = std::min(st.velocity_min[a], snap.u[a * ns + site]);
      st.velocity_max[a] = std::max(st.velocity_max[a], snap.u[a * ns + site]);
    }
  });
  return st;
}

std::string format_header(const Parameters& p, const Geometry& geo, std::size_t wall_links) {
  const CollisionParameters k = collision_parameters(p);
  std::string out;
  out += "System details\n--------------\n";
  out += fmt::format("System size:    {} {} {}\n", geo.n[0], geo.n[1], geo.n[2]);
  out += fmt::format("Periodic:       {} {} {}\n", p.periodic[0], p.periodic[1], p.periodic[2]);
  out += "\nFree energy details\n-------------------\n\nSymmetric phi^4 free energy selected.\n\nParameters:\n";
  out += fmt::format("Bulk parameter A      = {:12.5e}\n", p.a);
  out += fmt::format("Bulk parameter B      = {:12.5e}\n", p.b);
  out += fmt::format("Surface penalty kappa = {:12.5e}\n", p.kappa);
  out += fmt::format("Surface tension       = {:12.5e}\n", surface_tension(p));
  out += fmt::format("Interfacial width     = {:12.5e}\n", interfacial_width(p));
  out += "\nUsing full lattice Boltzmann solver for Cahn-Hilliard:\n";
  out += fmt::format("Mobility M            = {:12.5e}\n", p.mobility);
  out += "\nLattice Boltzmann collision\n---------------------------\n";
  out += fmt::format("Shear relaxation time: {:12.5e}\n", 1.0 / k.rtau_shear);
  out += fmt::format("Bulk relaxation time:  {:12.5e}\n", 1.0 / k.rtau_bulk);
  out += fmt::format("Ghost relaxation time: {:12.5e}\n", 1.0);
  if (wall_links) out += fmt::format("\nWall boundary links allocated:   {}\n", wall_links);
  return out;
}

std::string format_statistics(const Statistics& s, const Parameters& p) {
  std::string out;
  out += "\nScalars - total mean variance min max\n";
  out += fmt::format("[rho] {:14.2f} {:14.11f} {:14.7e} {:14.11f} {:14.11f}\n", s.rho.total, s.rho.mean, s.rho.variance,
                     s.rho.min, s.rho.max);
  out += fmt::format("[phi] {:14.7e} {:14.7e}{:14.7e} {:14.7e}{:14.7e}\n", s.phi.total, s.phi.mean, s.phi.variance,
                     s.phi.min, s.phi.max);
  if (!p.any_walls()) {
    out += "\nFree energy density - timestep total fluid\n";
    out += fmt::format("[fed] {:14d} {:17.10e} {:17.10e}\n", s.time, s.free_energy / s.lattice_volume,
                       s.free_energy / s.fluid_volume);
  } else {
    out += "\nFree energies - timestep f v f/v f_s1 fs_s2 \n";
    out += fmt::format("[fe] {:14d} {:17.10e} {:17.10e} {:17.10e} {:17.10e} {:17.10e}\n", s.time, s.free_energy,
                       s.fluid_volume, s.free_energy / s.fluid_volume, 0.0, 0.0);
  }
  out += "\nMomentum - x y z\n";
  out += fmt::format("[total   ] {:14.7e} {:14.7e} {:14.7e}\n", s.fluid_momentum[0] + s.wall_momentum[0],
                     s.fluid_momentum[1] + s.wall_momentum[1], s.fluid_momentum[2] + s.wall_momentum[2]);
  out += fmt::format("[fluid   ] {:14.7e} {:14.7e} {:14.7e}\n", s.fluid_momentum[0], s.fluid_momentum[1],
                     s.fluid_momentum[2]);
  if (p.any_walls())
    out += fmt::format("[walls   ] {:14.7e} {:14.7e} {:14.7e}\n", s.wall_momentum[0], s.wall_momentum[1],
                       s.wall_momentum[2]);
  if (s.time > 0) {
    out += "\nVelocity - x y z\n";
    out += fmt::format("[minimum ] {:14.7e} {:14.7e} {:14.7e}\n", s.velocity_min[0], s.velocity_min[1],
                       s.velocity_min[2]);
    out += fmt::format("[maximum ] {:14.7e} {:14.7e} {:14.7e}\n", s.velocity_max[0], s.velocity_max[1],
                       s.velocity_max[2]);
  }
  return out;
}

}  // namespace lb
