#pragma once
// The statistics Ludwig prints for a binary-fluid run, computed the way Ludwig computes them
// (one-pass sums in site order, population variances), and printed in Ludwig's formats so a
// log can be compared with Ludwig's token by token.

#include "input.hpp"
#include "solver.hpp"

#include <array>
#include <string>

namespace lb {

struct ScalarStatistics {
  double total = 0, mean = 0, variance = 0, min = 0, max = 0;
};

struct Statistics {
  int time = 0;
  ScalarStatistics rho, phi;
  double free_energy = 0;  ///< summed over fluid sites
  double fluid_volume = 0;
  double lattice_volume = 0;
  std::array<double, 3> fluid_momentum{}, wall_momentum{};
  std::array<double, 3> velocity_min{}, velocity_max{};
};

Statistics compute_statistics(const Snapshot& snapshot, const Geometry& geometry, const Parameters& parameters);

/// The run's header: system, free energy and collision parameters, as Ludwig prints them.
std::string format_header(const Parameters& parameters, const Geometry& geometry, std::size_t wall_links);
/// The statistics block Ludwig prints at a step (velocities only after step 0).
std::string format_statistics(const Statistics& s, const Parameters& parameters);

/// The derived constants of the symmetric free energy.
double surface_tension(const Parameters& p);
double interfacial_width(const Parameters& p);

}  // namespace lb
