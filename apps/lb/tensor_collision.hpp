#pragma once
// The binary collision written with tessera's own Tensor / Record / for_each API, beside the
// targetDP one: the populations are a Record of 19 doubles per site in any layout, and the
// kernel is the same binary_collision at one site. Used to check that the two front ends give
// the same bits (tests/lb) and to compare their speed (bench/lattice).

#include "binary_collision.hpp"
#include "geometry.hpp"

#include <tessera/layout/record.hpp>

#include <string>
#include <vector>

namespace lb {

template <typename S = tessera::Owned>
struct Populations : tessera::Record<S, tessera::Vector<double, nvel>> {
  TESSERA_RECORD(Populations)
};

template <typename S = tessera::Owned>
struct Vector3 : tessera::Record<S, tessera::Vector<double, 3>> {
  TESSERA_RECORD(Vector3)
};

/// The per-site state of one collision over the interior of a lattice, in the SoA lattice
/// arrays the targetDP solver uses (field q of site s at [q * nsites + s]).
struct CollisionState {
  std::vector<double> f, g;       ///< 19 fields
  std::vector<double> phi, delsq; ///< 1 field
  std::vector<double> grad, u;    ///< 3 fields
};

/// One collision of `state` on the targetDP target (every interior site); f, g and u change.
void targetdp_collision(const Geometry& geometry, const CollisionParameters& k, CollisionState& state);

/// The same collision with Tensors on `devices` ("host", "sim:1", "sim:4", ...), the lattice
/// split into `partitions` blocks along y and z (one per accelerator when 0).
void tensor_collision(const Geometry& geometry, const CollisionParameters& k, CollisionState& state,
                      const std::string& devices, int partitions = 0);

}  // namespace lb
