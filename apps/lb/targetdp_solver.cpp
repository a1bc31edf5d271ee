// The solver's kernels and their launches, written with targetDP. Compiled by the host compiler
// for host and sim targets; tessera-lb-cuda compiles the same file with nvcc for CUDA targets.

#include "solver.hpp"

#include "kiss.hpp"
#include "tensor_collision.hpp"

#include <tessera/core/error.hpp>
#include <tessera/targetdp.h>

#include <cstring>

namespace lb {

namespace {

// Constants of the collision and of the lattice, in constant memory on a GPU.
TARGET_CONST double t_collision[6];
TARGET_CONST double t_weights[nvel];
TARGET_CONST int t_velocities[nvel * 3];

// The lanes of one TLP chunk (sites s0 .. s0 + VVL - 1), as binary_collision sees them.
struct ChunkSite {
  double* f_;
  double* g_;
  const double* phi_;
  const double* grad_;
  const double* delsq_;
  double* u_;
  size_t ns;
  size_t s0;
  TESSERA_HOST_DEVICE double& f(int p, int v) { return f_[p * ns + s0 + v]; }
  TESSERA_HOST_DEVICE double& g(int p, int v) { return g_[p * ns + s0 + v]; }
  TESSERA_HOST_DEVICE double phi(int v) const { return phi_[s0 + v]; }
  TESSERA_HOST_DEVICE double grad(int a, int v) const { return grad_[a * ns + s0 + v]; }
  TESSERA_HOST_DEVICE double delsq(int v) const { return delsq_[s0 + v]; }
  TESSERA_HOST_DEVICE double& u(int a, int v) { return u_[a * ns + s0 + v]; }
};

TARGET_ENTRY void phi_from_g(const double* g, double* phi, size_t ns, size_t first, size_t count) {
  size_t base;
  TARGET_TLP(base, count) {
    const size_t s0 = first + base;
    double acc[VVL];
    int v;
    TARGET_ILP(v) acc[v] = 0.0;
    for (int p = 0; p < nvel; ++p) {
      TARGET_ILP(v) acc[v] += g[p * ns + s0 + v];
    }
    TARGET_ILP(v) phi[s0 + v] = acc[v];
  }
}

TARGET_ENTRY void halo_copy(double* a, int nfields, size_t ns, const size_t* dst, const size_t* src, size_t count) {
  size_t base;
  TARGET_TLP(base, count) {
    int v;
    for (int field = 0; field < nfields; ++field) {
      double* x = a + field * ns;
      TARGET_ILP(v) x[dst[base + v]] = x[src[base + v]];
    }
  }
}

// Ludwig's 3d_27pt_fluid: differences across the 9 pairs of planes, and the 26 neighbours.
TARGET_ENTRY void gradient_fluid(const double* phi, double* grad, double* delsq, size_t ns, size_t first,
                                 size_t count, size_t sx, size_t sy) {
  size_t base;
  TARGET_TLP(base, count) {
    const size_t s0 = first + base;
    const double r9 = 1.0 / 9.0;
    double gx[VVL], gy[VVL], gz[VVL], d[VVL];
    int v;
    TARGET_ILP(v) { gx[v] = gy[v] = gz[v] = d[v] = 0.0; }
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b) {
        TARGET_ILP(v) {
          const size_t s = s0 + v;
          gx[v] += phi[s + sx + a * sy + b] - phi[s - sx + a * sy + b];
          gy[v] += phi[s + a * sx + sy + b] - phi[s + a * sx - sy + b];
          gz[v] += phi[s + a * sx + b * sy + 1] - phi[s + a * sx + b * sy - 1];
        }
      }
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c) {
          if (a == 0 && b == 0 && c == 0) continue;
          TARGET_ILP(v) d[v] += phi[s0 + v + a * sx + b * sy + c];
        }
    TARGET_ILP(v) {
      const size_t s = s0 + v;
      grad[s] = 0.5 * r9 * gx[v];
      grad[ns + s] = 0.5 * r9 * gy[v];
      grad[2 * ns + s] = 0.5 * r9 * gz[v];
      delsq[s] = r9 * (d[v] - 26.0 * phi[s]);
    }
  }
}

// Ludwig's 3d_27pt_solid without wetting: a solid neighbour contributes nothing.
TARGET_ENTRY void gradient_solid(const double* phi, const char* fluid, double* grad, double* delsq, size_t ns,
                                 size_t first, size_t count, size_t sx, size_t sy) {
  size_t base;
  TARGET_TLP(base, count) {
    const size_t s0 = first + base;
    const double r9 = 1.0 / 9.0, r18 = 1.0 / 18.0;
    double gx[VVL], gy[VVL], gz[VVL], d[VVL];
    int v;
    TARGET_ILP(v) { gx[v] = gy[v] = gz[v] = d[v] = 0.0; }
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c) {
          if (a == 0 && b == 0 && c == 0) continue;
          TARGET_ILP(v) {
            const size_t n = s0 + v + a * sx + b * sy + c;
            const double t = fluid[n] ? phi[n] - phi[s0 + v] : -0.0;
            d[v] += t;
            gx[v] += t * a;
            gy[v] += t * b;
            gz[v] += t * c;
          }
        }
    TARGET_ILP(v) {
      const size_t s = s0 + v;
      delsq[s] = r9 * d[v];
      grad[s] = r18 * gx[v];
      grad[ns + s] = r18 * gy[v];
      grad[2 * ns + s] = r18 * gz[v];
    }
  }
}

TARGET_ENTRY void collide(double* f, double* g, const double* phi, const double* grad, const double* delsq, double* u,
                          size_t ns, size_t first, size_t count) {
  const CollisionParameters k{t_collision[0], t_collision[1], t_collision[2],
                              t_collision[3], t_collision[4], t_collision[5]};
  size_t base;
  TARGET_TLP(base, count) {
    ChunkSite site{f, g, phi, grad, delsq, u, ns, first + base};
    binary_collision<VVL>(site, tdp_nv_, k);
  }
}

// Mid-link bounce-back: what leaves a fluid site towards a wall comes back reversed, and the
// wall takes up twice the momentum (less the rest state's share, which sums to zero).
TARGET_ENTRY void bounce_back(double* f, double* g, const size_t* fluid_site, const size_t* wall_site,
                              const int* velocity, double* momentum, size_t ns, size_t nlinks) {
  size_t base;
  TARGET_TLP(base, nlinks) {
    int v;
    TARGET_ILP(v) {
      const size_t l = base + v;
      const int p = velocity[l];
      const size_t i = fluid_site[l], j = wall_site[l];
      const double fp = f[p * ns + i];
      for (int a = 0; a < 3; ++a) momentum[a * nlinks + l] += (2.0 * fp - 2.0 * t_weights[p]) * t_velocities[3 * p + a];
      f[(nvel - p) * ns + j] = fp;
      g[(nvel - p) * ns + j] = g[p * ns + i];
    }
  }
}

TARGET_ENTRY void propagate(const double* f, const double* g, double* f_new, double* g_new, size_t ns, size_t first,
                            size_t count, size_t sx, size_t sy) {
  size_t base;
  TARGET_TLP(base, count) {
    const size_t s0 = first + base;
    int v;
    for (int p = 0; p < nvel; ++p) {
      const ptrdiff_t back = t_velocities[3 * p] * (ptrdiff_t)sx + t_velocities[3 * p + 1] * (ptrdiff_t)sy +
                             t_velocities[3 * p + 2];
      const double* fp = f + p * ns - back;
      const double* gp = g + p * ns - back;
      double* fq = f_new + p * ns;
      double* gq = g_new + p * ns;
      TARGET_ILP(v) {
        fq[s0 + v] = fp[s0 + v];
        gq[s0 + v] = gp[s0 + v];
      }
    }
  }
}

template <class T>
T* target_array(std::size_t count, const char* what, const Geometry& geometry) {
  void* p = nullptr;
  const tdpStatus s = tdp_calloc(&p, count * sizeof(T));
  if (s != tdpSuccess)
    throw tessera::Error(std::string("lattice ") + std::to_string(geometry.n[0]) + "x" +
                         std::to_string(geometry.n[1]) + "x" + std::to_string(geometry.n[2]) + ": the " + what +
                         " field does not fit the target: " + tdp_last_error());
  return static_cast<T*>(p);
}

template <class T>
void upload(T* target, const std::vector<T>& host) {
  if (!host.empty()) copyToTarget(target, host.data(), host.size() * sizeof(T));
}

// The fields a collision reads and writes, on the target, freed with it: the solver's, and the
// ones targetdp_collision sets up for one collision.
struct CollisionFields {
  double *f = nullptr, *g = nullptr, *phi = nullptr, *grad = nullptr, *delsq = nullptr, *u = nullptr;

  CollisionFields() = default;
  CollisionFields(const CollisionFields&) = delete;
  CollisionFields& operator=(const CollisionFields&) = delete;
  ~CollisionFields() {
    for (double* p : {f, g, phi, grad, delsq, u}) tdp_free(p);  // never throws; nothing to act on
  }

  void allocate(const Geometry& geo) {
    const std::size_t ns = geo.nsites;
    f = target_array<double>(nvel * ns, "f", geo);
    g = target_array<double>(nvel * ns, "g", geo);
    phi = target_array<double>(ns, "phi", geo);
    grad = target_array<double>(3 * ns, "grad phi", geo);
    delsq = target_array<double>(ns, "Laplacian", geo);
    u = target_array<double>(3 * ns, "velocity", geo);
  }
  // Collides every site of the span of interior sites.
  void collide_all(const Geometry& geo) const {
    const size_t first = geo.span_first(), count = geo.span_count();
    collide TARGET_LAUNCH(count)(f, g, phi, grad, delsq, u, geo.nsites, first, count);
  }
};

void set_collision_constants(const CollisionParameters& k) {
  const double constants[6] = {k.rtau_shear, k.rtau_bulk, k.rtau2, k.a, k.b, k.kappa};
  copyConstantDouble1DArrayToTarget(t_collision, constants, sizeof constants);
}

}  // namespace

struct Solver::TargetFields : CollisionFields {
  double *f_new = nullptr, *g_new = nullptr;
  char* fluid = nullptr;
  size_t *halo_dst = nullptr, *halo_src = nullptr;
  size_t *link_fluid = nullptr, *link_wall = nullptr;
  int* link_velocity = nullptr;
  double* link_momentum = nullptr;

  ~TargetFields() {
    for (void* p : {(void*)f_new, (void*)g_new, (void*)fluid, (void*)halo_dst, (void*)halo_src, (void*)link_fluid,
                    (void*)link_wall, (void*)link_velocity, (void*)link_momentum})
      tdp_free(p);  // never throws; nothing to act on
  }
};

CollisionParameters collision_parameters(const Parameters& p) {
  const double rho0 = 1.0;
  return CollisionParameters{1.0 / (0.5 + p.viscosity / (rho0 * cs2)),
                             1.0 / (0.5 + p.bulk_viscosity() / (rho0 * cs2)),
                             2.0 / (1.0 + 2.0 * p.mobility),
                             p.a,
                             p.b,
                             p.kappa};
}

void initial_fields(const Parameters& p, const Geometry& geometry, std::vector<double>& f, std::vector<double>& g) {
  const std::size_t ns = geometry.nsites;
  f.assign(nvel * ns, 0.0);
  g.assign(nvel * ns, 0.0);
  for (int q = 0; q < nvel; ++q)
    for (std::size_t s = 0; s < ns; ++s) f[q * ns + s] = wv[q] * 1.0;
  geometry.for_each_interior([&](int i, int j, int k, std::size_t s) {
    const double r = site_uniform(p.random_seed, i, j, k);
    g[s] = p.phi0 + p.noise * (r - 0.5);
  });
}

Solver::Solver(const Parameters& parameters)
    : parameters_(parameters), geometry_(parameters), t_(std::make_unique<TargetFields>()) {
  const std::size_t ns = geometry_.nsites;
  auto& t = *t_;
  t.allocate(geometry_);
  t.f_new = target_array<double>(nvel * ns, "propagated f", geometry_);
  t.g_new = target_array<double>(nvel * ns, "propagated g", geometry_);

  std::vector<char> fluid(ns, 0);
  for (int i = 0; i <= geometry_.n[0] + 1; ++i)
    for (int j = 0; j <= geometry_.n[1] + 1; ++j)
      for (int k = 0; k <= geometry_.n[2] + 1; ++k) fluid[geometry_.index(i, j, k)] = !geometry_.solid(i, j, k);
  t.fluid = target_array<char>(ns, "fluid map", geometry_);
  upload(t.fluid, fluid);

  std::vector<std::size_t> dst, src;
  geometry_.periodic_halo(dst, src);
  num_halo_ = dst.size();
  t.halo_dst = target_array<std::size_t>(num_halo_, "halo index", geometry_);
  t.halo_src = target_array<std::size_t>(num_halo_, "halo index", geometry_);
  upload(t.halo_dst, dst);
  upload(t.halo_src, src);

  std::vector<std::size_t> link_fluid, link_wall;
  std::vector<int> link_velocity;
  geometry_.wall_links(link_fluid, link_wall, link_velocity);
  num_links_ = link_fluid.size();
  t.link_fluid = target_array<std::size_t>(num_links_, "wall link", geometry_);
  t.link_wall = target_array<std::size_t>(num_links_, "wall link", geometry_);
  t.link_velocity = target_array<int>(num_links_, "wall link", geometry_);
  t.link_momentum = target_array<double>(3 * num_links_, "wall momentum", geometry_);
  upload(t.link_fluid, link_fluid);
  upload(t.link_wall, link_wall);
  upload(t.link_velocity, link_velocity);

  set_collision_constants(collision_parameters(parameters_));
  copyConstantDouble1DArrayToTarget(t_weights, wv, sizeof wv);
  copyConstantInt1DArrayToTarget(t_velocities, &cv[0][0], sizeof cv);

  std::vector<double> f, g;
  initial_fields(parameters_, geometry_, f, g);
  upload(t.f, f);
  upload(t.g, g);
  // The statistics at t = 0 use the gradients of the initial phi.
  compute_phi_and_gradients();
  syncTarget();
}

Solver::~Solver() = default;

void Solver::compute_phi_and_gradients() {
  auto& t = *t_;
  const Geometry& geo = geometry_;
  const size_t ns = geo.nsites, first = geo.span_first(), count = geo.span_count();
  phi_from_g TARGET_LAUNCH(count)(t.g, t.phi, ns, first, count);
  if (num_halo_) halo_copy TARGET_LAUNCH(num_halo_)(t.phi, 1, ns, t.halo_dst, t.halo_src, num_halo_);
  if (parameters_.gradient == Gradient::fluid_27pt)
    gradient_fluid TARGET_LAUNCH(count)(t.phi, t.grad, t.delsq, ns, first, count, geo.stride_x, geo.stride_y);
  else
    gradient_solid TARGET_LAUNCH(count)(t.phi, t.fluid, t.grad, t.delsq, ns, first, count, geo.stride_x,
                                        geo.stride_y);
}

void Solver::step() {
  auto& t = *t_;
  const Geometry& geo = geometry_;
  const size_t ns = geo.nsites, first = geo.span_first(), count = geo.span_count();
  compute_phi_and_gradients();
  t.collide_all(geo);
  if (num_halo_) {
    halo_copy TARGET_LAUNCH(num_halo_)(t.f, nvel, ns, t.halo_dst, t.halo_src, num_halo_);
    halo_copy TARGET_LAUNCH(num_halo_)(t.g, nvel, ns, t.halo_dst, t.halo_src, num_halo_);
  }
  if (num_links_)
    bounce_back TARGET_LAUNCH(num_links_)(t.f, t.g, t.link_fluid, t.link_wall, t.link_velocity, t.link_momentum, ns,
                                          num_links_);
  propagate TARGET_LAUNCH(count)(t.f, t.g, t.f_new, t.g_new, ns, first, count, geo.stride_x, geo.stride_y);
  std::swap(t.f, t.f_new);
  std::swap(t.g, t.g_new);
  ++time_;
}

Snapshot Solver::snapshot() const {
  syncTarget();
  const auto& t = *t_;
  const std::size_t ns = geometry_.nsites;
  Snapshot s;
  s.time = time_;
  s.f.resize(nvel * ns);
  s.g.resize(nvel * ns);
  s.u.resize(3 * ns);
  s.grad.resize(3 * ns);
  s.delsq.resize(ns);
  copyFromTarget(s.f.data(), t.f, s.f.size() * sizeof(double));
  copyFromTarget(s.g.data(), t.g, s.g.size() * sizeof(double));
  copyFromTarget(s.u.data(), t.u, s.u.size() * sizeof(double));
  copyFromTarget(s.grad.data(), t.grad, s.grad.size() * sizeof(double));
  copyFromTarget(s.delsq.data(), t.delsq, s.delsq.size() * sizeof(double));
  if (num_links_) {
    std::vector<double> momentum(3 * num_links_);
    copyFromTarget(momentum.data(), t.link_momentum, momentum.size() * sizeof(double));
    for (int a = 0; a < 3; ++a)
      for (std::size_t l = 0; l < num_links_; ++l) s.wall_momentum[a] += momentum[a * num_links_ + l];
  }
  return s;
}

void targetdp_collision(const Geometry& geo, const CollisionParameters& k, CollisionState& st) {
  CollisionFields t;
  t.allocate(geo);
  upload(t.f, st.f);
  upload(t.g, st.g);
  upload(t.phi, st.phi);
  upload(t.grad, st.grad);
  upload(t.delsq, st.delsq);
  set_collision_constants(k);
  t.collide_all(geo);
  syncTarget();
  st.u.resize(3 * geo.nsites);
  copyFromTarget(st.f.data(), t.f, st.f.size() * sizeof(double));
  copyFromTarget(st.g.data(), t.g, st.g.size() * sizeof(double));
  copyFromTarget(st.u.data(), t.u, st.u.size() * sizeof(double));
}

}  // namespace lb
