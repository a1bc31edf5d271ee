#pragma once
// The binary-fluid lattice Boltzmann solver on targetDP (tessera/targetdp.h): every field lives
// on the target as SoA arrays, every stage of a step is a TARGET_ENTRY kernel with TLP over
// chunks of VVL sites and ILP within a chunk, and the host only sees the fields when
// statistics are taken.
//
// A step (Ludwig's order for symmetric_lb): phi = sum_p g_p; periodic halo of phi; gradient and
// Laplacian of phi (27 points); collision of f and g; periodic halos of f and g; bounce-back on
// the wall links; propagation (pull).

#include "binary_collision.hpp"
#include "geometry.hpp"
#include "input.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace lb {

/// The fields of a run copied to the host: what the statistics are computed from.
struct Snapshot {
  int time = 0;
  std::vector<double> f, g;    ///< 19 * nsites each
  std::vector<double> u;       ///< 3 * nsites: the velocity of the last collision
  std::vector<double> grad;    ///< 3 * nsites: the gradient of phi at the start of the last step
  std::vector<double> delsq;   ///< nsites
  std::array<double, 3> wall_momentum{};  ///< momentum the walls took up since the start
};

CollisionParameters collision_parameters(const Parameters& p);

class Solver {
public:
  /// Allocates every field on the targetDP target (a tessera::Error when it does not fit) and
  /// sets the spinodal initial condition.
  explicit Solver(const Parameters& parameters);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  void step();
  int time() const { return time_; }
  const Geometry& geometry() const { return geometry_; }
  const Parameters& parameters() const { return parameters_; }
  std::size_t num_wall_links() const { return num_links_; }
  /// Waits for the target and copies the fields to the host.
  Snapshot snapshot() const;

private:
  struct TargetFields;
  void compute_phi_and_gradients();

  Parameters parameters_;
  Geometry geometry_;
  int time_ = 0;
  std::size_t num_links_ = 0;
  std::size_t num_halo_ = 0;
  std::unique_ptr<TargetFields> t_;
};

/// The initial fields on the host, before any target is involved: phi from the spinodal
/// generator at interior sites, f at rest (w_p), g_0 = phi.
void initial_fields(const Parameters& p, const Geometry& geometry, std::vector<double>& f, std::vector<double>& g);

}  // namespace lb
