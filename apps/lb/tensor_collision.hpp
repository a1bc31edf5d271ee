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

// binary_collision's view of one site of the tensors: each Vector member's reference (first
// component and stride) taken once per site, not at every access.
template <class FRef, class GRef, class GradRef, class URef>
struct TensorSite {
  FRef fr;
  GRef gr;
  GradRef gradr;
  URef ur;
  double phi_value;
  double delsq_value;
  TESSERA_HOST_DEVICE double& f(int p, int) { return fr[static_cast<std::size_t>(p)]; }
  TESSERA_HOST_DEVICE double& g(int p, int) { return gr[static_cast<std::size_t>(p)]; }
  TESSERA_HOST_DEVICE double phi(int) const { return phi_value; }
  TESSERA_HOST_DEVICE double grad(int a, int) const { return gradr[static_cast<std::size_t>(a)]; }
  TESSERA_HOST_DEVICE double delsq(int) const { return delsq_value; }
  TESSERA_HOST_DEVICE double& u(int a, int) { return ur[static_cast<std::size_t>(a)]; }
};

/// The for_each kernel: binary_collision at one site of the f, g, phi, grad, delsq, u tensors.
struct CollideKernel {
  CollisionParameters k;
  template <class F, class G, class Phi, class Grad, class Delsq, class U>
  TESSERA_HOST_DEVICE void operator()(F f, G g, Phi phi, Grad grad, Delsq delsq, U u) const {
    auto fv = *f;
    auto gv = *g;
    auto gradv = *grad;
    auto uv = *u;
    auto fr = fv.template get<0>();
    auto gr = gv.template get<0>();
    auto gradr = gradv.template get<0>();
    auto ur = uv.template get<0>();
    TensorSite<decltype(fr), decltype(gr), decltype(gradr), decltype(ur)> site{fr, gr, gradr, ur, *phi, *delsq};
    // One site, no lane loop: for_each's own strip loop is the loop the compiler vectorises.
    binary_collision_lane(site, 0, k);
  }
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
