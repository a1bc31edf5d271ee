#pragma once
// CloverLeaf 2-D (UK-MAC/CloverLeaf_ref; OPS port in OP-DSL/OPS apps/c/CloverLeaf) on the loops
// front end: a Lagrangian-Eulerian hydrodynamics cycle on a staggered mesh, every kernel a
// par_loop. Indices are 0-based: cells 0..nx-1, nodes and x faces 0..nx (likewise in y), all
// with two halo layers. Cell fields are nx x ny, node fields (velocities) (nx+1) x (ny+1), x-face
// fields (vol_flux_x, mass_flux_x, xarea) (nx+1) x ny, y-face fields nx x (ny+1).
//
// One step (hydro.f90): timestep (ideal gas, halos, viscosity, halos, calc_dt: a min reduction),
// PdV predictor (then ideal gas on the predicted state, pressure halo and revert), accelerate,
// PdV corrector, flux_calc, advection (cell then momentum, in x then y on odd steps and y then x on
// even ones, with the halo updates between), reset_field. Boundaries are reflective.
//
// CloverLeaf's mesh is uniform, so its 1-D arrays (celldx = vertexdx = dx, celldy = vertexdy = dy)
// are the globals dx and dy here rather than 1-D datasets read through strided stencils: no
// traffic for values that never vary; the vertex and cell-centre coordinates generate_chunk needs
// come from the site index.
//
// Every kernel is a TESSERA_HOST_DEVICE lambda (or functor), and so is every helper it calls, so
// the nvcc build (tessera-cloverleaf-cuda) runs the loops on CUDA devices; kernels capture only
// trivially copyable values.

#include "deck.hpp"

#include <tessera/core/error.hpp>
#include <tessera/loops.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cloverleaf {

namespace tl = tessera::loops;

/// The totals CloverLeaf's field_summary prints.
struct Summary {
  int step = 0;
  double time = 0.0;
  double volume = 0.0, mass = 0.0, pressure_volume = 0.0, internal_energy = 0.0, kinetic_energy = 0.0;
  double density() const { return mass / volume; }
  double pressure() const { return pressure_volume / volume; }
  double total_energy() const { return internal_energy + kinetic_energy; }
};

/// What one step did: its number, the time it started at, its dt and what limited dt ("sound",
/// "xvel", "yvel", "div" from calc_dt, or "rise" / "max" from timestep_rise and max_timestep).
struct StepInfo {
  int step = 0;
  double time = 0.0, dt = 0.0;
  const char* control = "";
};

/// CloverLeaf's field identifiers for update_halo.
enum Field : unsigned {
  f_density0 = 1u << 0, f_density1 = 1u << 1, f_energy0 = 1u << 2, f_energy1 = 1u << 3, f_pressure = 1u << 4,
  f_viscosity = 1u << 5, f_soundspeed = 1u << 6, f_xvel0 = 1u << 7, f_xvel1 = 1u << 8, f_yvel0 = 1u << 9,
  f_yvel1 = 1u << 10, f_vol_flux_x = 1u << 11, f_vol_flux_y = 1u << 12, f_mass_flux_x = 1u << 13,
  f_mass_flux_y = 1u << 14
};

namespace detail {

using In = tl::Acc<const double>;
using Out = tl::Acc<double>;

inline constexpr double g_small = 1.0e-16, g_big = 1.0e21;

inline tl::Stencil stencil(std::initializer_list<tl::Offset> points, const char* name) {
  return tl::Stencil(2, std::vector<tl::Offset>(points), name);
}

/// Reflective halo copy of N fields across one boundary: the kernel gets N destinations (site
/// stencil), N sources and the site index; along `axis` the source index is `mirror` minus the
/// site's, so one loop fills both halo layers: dst(0, 0) = sign * src(mirror - 2 i).
template <std::size_t N>
struct Reflect {
  int axis;
  int mirror;
  std::array<double, N> sign;
  template <typename... A>
  TESSERA_HOST_DEVICE void operator()(A... args) const {
    static_assert(sizeof...(A) == 2 * N + 1);
    const auto t = std::forward_as_tuple(args...);
    const int* idx = std::get<2 * N>(t);
    const int off = mirror - 2 * idx[axis];
    const int ox = axis == 0 ? off : 0, oy = axis == 0 ? 0 : off;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((std::get<I>(t)(0, 0) = sign[I] * std::get<N + I>(t)(ox, oy)), ...);
    }(std::make_index_sequence<N>{});
  }
};

/// Whether state `s` covers cell (i, j), as generate_chunk tests it.
TESSERA_HOST_DEVICE inline bool covers(const State& s, double xmin, double ymin, double dx, double dy, int i, int j) {
  const double x0 = xmin + dx * double(i), x1 = xmin + dx * double(i + 1);
  const double y0 = ymin + dy * double(j), y1 = ymin + dy * double(j + 1);
  switch (s.geometry) {
    case Geometry::rectangle: return x1 >= s.xmin && x0 < s.xmax && y1 >= s.ymin && y0 < s.ymax;
    case Geometry::circle: {
      const double cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1);
      const double r = std::sqrt((cx - s.xmin) * (cx - s.xmin) + (cy - s.ymin) * (cy - s.ymin));
      return r <= s.radius;
    }
    default: return x0 == s.xmin && y0 == s.ymin;
  }
}

/// calc_dt's safety factors and mesh spacing, one global of the calc_dt loop.
struct DtSafety {
  double dtc, dtu, dtv, dtdiv, dx, dy;
};

}  // namespace detail

class Solver {
 public:
  Solver(tl::Context& context, const Deck& deck)
      : deck_(deck), nx_(deck.x_cells), ny_(deck.y_cells),
        dx_((deck.xmax - deck.xmin) / double(deck.x_cells)), dy_((deck.ymax - deck.ymin) / double(deck.y_cells)),
        grid_(context, 2, "clover"),
        density0_(grid_, cells(), "density0"), density1_(grid_, cells(), "density1"),
        energy0_(grid_, cells(), "energy0"), energy1_(grid_, cells(), "energy1"),
        pressure_(grid_, cells(), "pressure"), viscosity_(grid_, cells(), "viscosity"),
        soundspeed_(grid_, cells(), "soundspeed"), volume_(grid_, cells(), "volume"),
        xvel0_(grid_, nodes(), "xvel0"), xvel1_(grid_, nodes(), "xvel1"),
        yvel0_(grid_, nodes(), "yvel0"), yvel1_(grid_, nodes(), "yvel1"),
        vol_flux_x_(grid_, xfaces(), "vol_flux_x"), mass_flux_x_(grid_, xfaces(), "mass_flux_x"),
        xarea_(grid_, xfaces(), "xarea"),
        vol_flux_y_(grid_, yfaces(), "vol_flux_y"), mass_flux_y_(grid_, yfaces(), "mass_flux_y"),
        yarea_(grid_, yfaces(), "yarea"),
        pre_vol_(grid_, nodes(), "pre_vol"), post_vol_(grid_, nodes(), "post_vol"),
        ener_flux_(grid_, nodes(), "ener_flux"), node_flux_(grid_, nodes(), "node_flux"),
        node_mass_post_(grid_, nodes(), "node_mass_post"), node_mass_pre_(grid_, nodes(), "node_mass_pre"),
        mom_flux_x_(grid_, nodes(), "mom_flux_x"), mom_flux_y_(grid_, nodes(), "mom_flux_y"),
        dtc_(context, tl::ReduceOp::min, "dt sound"), dtu_(context, tl::ReduceOp::min, "dt xvel"),
        dtv_(context, tl::ReduceOp::min, "dt yvel"), dtdiv_(context, tl::ReduceOp::min, "dt div"),
        sum_vol_(context, tl::ReduceOp::inc, "volume"), sum_mass_(context, tl::ReduceOp::inc, "mass"),
        sum_ie_(context, tl::ReduceOp::inc, "internal energy"), sum_ke_(context, tl::ReduceOp::inc, "kinetic energy"),
        sum_press_(context, tl::ReduceOp::inc, "pressure") {
    if (deck.states.empty()) throw tessera::Error("cloverleaf: the deck has no states");
    dtold_ = deck.dtinit;
    initialise_chunk();
    generate_chunk();
    ideal_gas(false);
    update_halo(f_density0 | f_energy0 | f_pressure | f_viscosity | f_density1 | f_energy1 | f_xvel0 | f_yvel0 |
                    f_xvel1 | f_yvel1,
                2);
  }

  const Deck& deck() const noexcept { return deck_; }
  int step() const noexcept { return step_; }
  double time() const noexcept { return time_; }
  int nx() const noexcept { return nx_; }
  int ny() const noexcept { return ny_; }
  double dx() const noexcept { return dx_; }
  double dy() const noexcept { return dy_; }

  /// CloverLeaf's stopping rule: time + g_small > end_time or step >= end_step.
  bool finished() const noexcept {
    return time_ + detail::g_small > deck_.end_time || long(step_) >= deck_.end_step;
  }

  /// One hydro cycle. Throws tessera::Error when dt falls below dtmin.
  StepInfo advance() {
    ++step_;
    StepInfo info;
    info.step = step_;
    info.time = time_;
    timestep(info);
    PdV(true);
    accelerate();
    PdV(false);
    flux_calc();
    advection();
    reset_field();
    advect_x_ = !advect_x_;
    time_ += dt_;
    return info;
  }

  /// CloverLeaf's field_summary (after an ideal-gas update, as CloverLeaf does).
  Summary field_summary() {
    ideal_gas(false);
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(In vol, In den, In ene, In pre, In xv, In yv, double& v, double& m, double& ie,
                               double& ke, double& p) {
          double vsqrd = 0.0;
          vsqrd += 0.25 * (xv(0, 0) * xv(0, 0) + yv(0, 0) * yv(0, 0));
          vsqrd += 0.25 * (xv(1, 0) * xv(1, 0) + yv(1, 0) * yv(1, 0));
          vsqrd += 0.25 * (xv(0, 1) * xv(0, 1) + yv(0, 1) * yv(0, 1));
          vsqrd += 0.25 * (xv(1, 1) * xv(1, 1) + yv(1, 1) * yv(1, 1));
          const double cell_vol = vol(0, 0);
          const double cell_mass = cell_vol * den(0, 0);
          v += cell_vol;
          m += cell_mass;
          ie += cell_mass * ene(0, 0);
          ke += cell_mass * 0.5 * vsqrd;
          p += cell_vol * pre(0, 0);
        },
        "field_summary", grid_, interior(), tl::read(volume_, site_), tl::read(density0_, site_),
        tl::read(energy0_, site_), tl::read(pressure_, site_), tl::read(xvel0_, corners_), tl::read(yvel0_, corners_),
        tl::reduce(sum_vol_), tl::reduce(sum_mass_), tl::reduce(sum_ie_), tl::reduce(sum_ke_), tl::reduce(sum_press_));
    Summary s;
    s.step = step_;
    s.time = time_;
    s.volume = sum_vol_.get();
    s.mass = sum_mass_.get();
    s.internal_energy = sum_ie_.get();
    s.kinetic_energy = sum_ke_.get();
    s.pressure_volume = sum_press_.get();
    return s;
  }

  /// The interior of a cell field (density0, energy0, pressure, ...), x fastest, for output.
  std::vector<double> interior_of(tl::Dataset<double>& d) {
    const std::vector<double> all = d.fetch();
    std::vector<double> out(std::size_t(nx_) * std::size_t(ny_));
    for (int j = 0; j < ny_; ++j)
      for (int i = 0; i < nx_; ++i) out[std::size_t(i) + std::size_t(nx_) * std::size_t(j)] = all[d.index(i, j)];
    return out;
  }
  tl::Dataset<double>& density0() noexcept { return density0_; }
  tl::Dataset<double>& energy0() noexcept { return energy0_; }
  tl::Dataset<double>& pressure() noexcept { return pressure_; }
  tl::Dataset<double>& xvel0() noexcept { return xvel0_; }
  tl::Dataset<double>& yvel0() noexcept { return yvel0_; }

 private:
  tl::Shape cells() const { return {.size = {nx_, ny_, 1}, .d_m = {-2, -2, 0}, .d_p = {2, 2, 0}}; }
  tl::Shape nodes() const { return {.size = {nx_ + 1, ny_ + 1, 1}, .d_m = {-2, -2, 0}, .d_p = {2, 2, 0}}; }
  tl::Shape xfaces() const { return {.size = {nx_ + 1, ny_, 1}, .d_m = {-2, -2, 0}, .d_p = {2, 2, 0}}; }
  tl::Shape yfaces() const { return {.size = {nx_, ny_ + 1, 1}, .d_m = {-2, -2, 0}, .d_p = {2, 2, 0}}; }
  tl::Range interior() const { return tl::Range::of(2, {0, nx_, 0, ny_}); }
  tl::Range interior_nodes() const { return tl::Range::of(2, {0, nx_ + 1, 0, ny_ + 1}); }

  // The member functions from here to the halo updates hold the kernels, which are extended
  // (TESSERA_HOST_DEVICE) lambdas under nvcc: nvcc rejects those in a private or protected member
  // function, so these are public. They are not meant to be called from outside.
 public:
  using In = detail::In;
  using Out = detail::Out;

  // ---- set-up -------------------------------------------------------------------------------

  void initialise_chunk() {
    const double cell_volume = dx_ * dy_;
    tl::par_loop([] TESSERA_HOST_DEVICE(Out v, const double& c) { v(0, 0) = c; }, "initialise volume", grid_,
                 tl::Range::of(2, {-2, nx_ + 2, -2, ny_ + 2}), tl::write(volume_, site_), tl::gbl(cell_volume));
    tl::par_loop([] TESSERA_HOST_DEVICE(Out a, const double& c) { a(0, 0) = c; }, "initialise xarea", grid_,
                 tl::Range::of(2, {-2, nx_ + 3, -2, ny_ + 2}), tl::write(xarea_, site_), tl::gbl(dy_));
    tl::par_loop([] TESSERA_HOST_DEVICE(Out a, const double& c) { a(0, 0) = c; }, "initialise yarea", grid_,
                 tl::Range::of(2, {-2, nx_ + 2, -2, ny_ + 3}), tl::write(yarea_, site_), tl::gbl(dx_));
  }

  // As CloverLeaf applies the states: state 1 everywhere, then each later state, in order, over
  // the cells its geometry covers. One loop per state and kind of site, each capturing its one
  // State by value, so that a kernel's captures stay small (on a GPU they are the launch's
  // arguments) whatever the deck's number of states.
  void generate_chunk() {
    const double x0 = deck_.xmin, y0 = deck_.ymin, ddx = dx_, ddy = dy_;
    const int nx = nx_, ny = ny_;
    const tl::Range node_range = tl::Range::of(2, {-2, nx_ + 3, -2, ny_ + 3});
    const State background = deck_.states[0];
    tl::par_loop(
        [background] TESSERA_HOST_DEVICE(Out den, Out ene) {
          den(0, 0) = background.density;
          ene(0, 0) = background.energy;
        },
        "generate_chunk cells", grid_, interior(), tl::write(density0_, site_), tl::write(energy0_, site_));
    tl::par_loop(
        [background] TESSERA_HOST_DEVICE(Out xv, Out yv) {
          xv(0, 0) = background.xvel;
          yv(0, 0) = background.yvel;
        },
        "generate_chunk nodes", grid_, node_range, tl::write(xvel0_, site_), tl::write(yvel0_, site_));
    for (std::size_t n = 1; n < deck_.states.size(); ++n) {
      const State state = deck_.states[n];
      tl::par_loop(
          [state, x0, y0, ddx, ddy] TESSERA_HOST_DEVICE(Out den, Out ene, const int* idx) {
            if (detail::covers(state, x0, y0, ddx, ddy, idx[0], idx[1])) {
              den(0, 0) = state.density;
              ene(0, 0) = state.energy;
            }
          },
          "generate_chunk cells state", grid_, interior(), tl::rw(density0_, site_), tl::rw(energy0_, site_),
          tl::idx());
      // CloverLeaf sets the four nodes of each covered cell; here each node looks at its four cells.
      tl::par_loop(
          [state, x0, y0, ddx, ddy, nx, ny] TESSERA_HOST_DEVICE(Out xv, Out yv, const int* idx) {
            bool hit = false;
            for (int cj = idx[1] - 1; cj <= idx[1]; ++cj)
              for (int ci = idx[0] - 1; ci <= idx[0]; ++ci)
                if (ci >= 0 && ci < nx && cj >= 0 && cj < ny && detail::covers(state, x0, y0, ddx, ddy, ci, cj))
                  hit = true;
            if (hit) {
              xv(0, 0) = state.xvel;
              yv(0, 0) = state.yvel;
            }
          },
          "generate_chunk nodes state", grid_, node_range, tl::rw(xvel0_, site_), tl::rw(yvel0_, site_), tl::idx());
    }
  }

  // ---- kernels ------------------------------------------------------------------------------

  void ideal_gas(bool predicted) {
    tl::Dataset<double>& den = predicted ? density1_ : density0_;
    tl::Dataset<double>& ene = predicted ? energy1_ : energy0_;
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(In d, In e, Out p, Out ss) {
          const double v = 1.0 / d(0, 0);
          const double pressure = (1.4 - 1.0) * d(0, 0) * e(0, 0);
          const double pressurebyenergy = (1.4 - 1.0) * d(0, 0);
          const double pressurebyvolume = -d(0, 0) * pressure;
          const double sound_speed_squared = v * v * (pressure * pressurebyenergy - pressurebyvolume);
          p(0, 0) = pressure;
          ss(0, 0) = std::sqrt(sound_speed_squared);
        },
        "ideal_gas", grid_, interior(), tl::read(den, site_), tl::read(ene, site_), tl::write(pressure_, site_),
        tl::write(soundspeed_, site_));
  }

  void viscosity() {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out visc, In den, In p, In xv, In yv, const double& dx, const double& dy) {
          const double ugrad = (xv(1, 0) + xv(1, 1)) - (xv(0, 0) + xv(0, 1));
          const double vgrad = (yv(0, 1) + yv(1, 1)) - (yv(0, 0) + yv(1, 0));
          const double div = dx * ugrad + dy * vgrad;
          const double strain2 = 0.5 * (xv(0, 1) + xv(1, 1) - xv(0, 0) - xv(1, 0)) / dy +
                                 0.5 * (yv(1, 0) + yv(1, 1) - yv(0, 0) - yv(0, 1)) / dx;
          double pgradx = (p(1, 0) - p(-1, 0)) / (dx + dx);
          double pgrady = (p(0, 1) - p(0, -1)) / (dy + dy);
          const double pgradx2 = pgradx * pgradx;
          const double pgrady2 = pgrady * pgrady;
          const double limiter = ((0.5 * ugrad / dx) * pgradx2 + (0.5 * vgrad / dy) * pgrady2 + strain2 * pgradx * pgrady) /
                                 std::max(pgradx2 + pgrady2, 1.0e-16);
          const double dirx = pgradx < 0.0 ? -1.0 : 1.0;
          pgradx = dirx * std::max(1.0e-16, std::fabs(pgradx));
          const double diry = pgradx < 0.0 ? -1.0 : 1.0;  // CloverLeaf tests pgradx here too
          pgrady = diry * std::max(1.0e-16, std::fabs(pgrady));
          const double pgrad = std::sqrt(pgradx * pgradx + pgrady * pgrady);
          const double xgrad = std::fabs(dx * pgrad / pgradx);
          const double ygrad = std::fabs(dy * pgrad / pgrady);
          const double grad = std::min(xgrad, ygrad);
          const double grad2 = grad * grad;
          const double q = 2.0 * den(0, 0) * grad2 * limiter * limiter;
          visc(0, 0) = (limiter > 0.0 || div >= 0.0) ? 0.0 : q;
        },
        "viscosity", grid_, interior(), tl::write(viscosity_, site_), tl::read(density0_, site_),
        tl::read(pressure_, cross_), tl::read(xvel0_, corners_), tl::read(yvel0_, corners_), tl::gbl(dx_), tl::gbl(dy_));
  }

  void calc_dt() {
    const detail::DtSafety k{deck_.dtc_safe, deck_.dtu_safe, deck_.dtv_safe, deck_.dtdiv_safe, dx_, dy_};
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(In ss, In visc, In den, In vol, In xa, In ya, In xv, In yv, const detail::DtSafety& c,
                               double& dtc, double& dtu, double& dtv, double& dtdiv) {
          const double g_small = detail::g_small, g_big = detail::g_big;  // values: std::max takes references
          double cc = ss(0, 0) * ss(0, 0);
          cc = cc + 2.0 * visc(0, 0) / den(0, 0);
          cc = std::max(std::sqrt(cc), g_small);
          const double dtct = c.dtc * std::min(c.dx, c.dy) / cc;
          double div = 0.0;
          double dv1 = (xv(0, 0) + xv(0, 1)) * xa(0, 0);
          double dv2 = (xv(1, 0) + xv(1, 1)) * xa(1, 0);
          div = div + dv2 - dv1;
          const double v = vol(0, 0);
          const double dtut = c.dtu * 2.0 * v / std::max(std::max(std::fabs(dv1), std::fabs(dv2)), g_small * v);
          dv1 = (yv(0, 0) + yv(1, 0)) * ya(0, 0);
          dv2 = (yv(0, 1) + yv(1, 1)) * ya(0, 1);
          div = div + dv2 - dv1;
          const double dtvt = c.dtv * 2.0 * v / std::max(std::max(std::fabs(dv1), std::fabs(dv2)), g_small * v);
          div = div / (2.0 * v);
          const double dtdivt = div < -g_small ? c.dtdiv * (-1.0 / div) : g_big;
          dtc = std::min(dtc, dtct);
          dtu = std::min(dtu, dtut);
          dtv = std::min(dtv, dtvt);
          dtdiv = std::min(dtdiv, dtdivt);
        },
        "calc_dt", grid_, interior(), tl::read(soundspeed_, site_), tl::read(viscosity_, site_),
        tl::read(density0_, site_), tl::read(volume_, site_), tl::read(xarea_, xpair_), tl::read(yarea_, ypair_),
        tl::read(xvel0_, corners_), tl::read(yvel0_, corners_), tl::gbl(k), tl::reduce(dtc_), tl::reduce(dtu_),
        tl::reduce(dtv_), tl::reduce(dtdiv_));
  }

  void timestep(StepInfo& info) {
    ideal_gas(false);
    update_halo(f_pressure | f_energy0 | f_density0 | f_xvel0 | f_yvel0, 1);
    viscosity();
    update_halo(f_viscosity, 1);
    calc_dt();
    const double candidates[4] = {dtc_.get(), dtu_.get(), dtv_.get(), dtdiv_.get()};
    static const char* const names[4] = {"sound", "xvel", "yvel", "div"};
    double dt = detail::g_big;
    const char* control = names[0];
    for (int c = 0; c < 4; ++c)
      if (candidates[c] < dt) {
        dt = candidates[c];
        control = names[c];
      }
    if (dt < deck_.dtmin)
      throw tessera::Error("cloverleaf: step " + std::to_string(step_) + ": calc_dt gave dt " + std::to_string(dt) +
                           " (" + control + "), below dtmin " + std::to_string(deck_.dtmin));
    if (dtold_ * deck_.dtrise < dt) {
      dt = dtold_ * deck_.dtrise;
      control = "rise";
    }
    if (deck_.dtmax < dt) {
      dt = deck_.dtmax;
      control = "max";
    }
    if (dt < deck_.dtmin)
      throw tessera::Error("cloverleaf: step " + std::to_string(step_) + ": dt " + std::to_string(dt) +
                           " below dtmin " + std::to_string(deck_.dtmin));
    dt_ = dt;
    dtold_ = dt;
    info.dt = dt;
    info.control = control;
  }

  void PdV(bool predict) {
    if (predict) {
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out e1, Out d1, In xa, In ya, In vol, In d0, In e0, In p, In visc, In xv0, In yv0,
                                 const double& dt) {
            const double left_flux = (xa(0, 0) * (xv0(0, 0) + xv0(0, 1) + xv0(0, 0) + xv0(0, 1))) * 0.25 * dt * 0.5;
            const double right_flux = (xa(1, 0) * (xv0(1, 0) + xv0(1, 1) + xv0(1, 0) + xv0(1, 1))) * 0.25 * dt * 0.5;
            const double bottom_flux = (ya(0, 0) * (yv0(0, 0) + yv0(1, 0) + yv0(0, 0) + yv0(1, 0))) * 0.25 * dt * 0.5;
            const double top_flux = (ya(0, 1) * (yv0(0, 1) + yv0(1, 1) + yv0(0, 1) + yv0(1, 1))) * 0.25 * dt * 0.5;
            const double total_flux = right_flux - left_flux + top_flux - bottom_flux;
            const double volume_change = vol(0, 0) / (vol(0, 0) + total_flux);
            const double recip_volume = 1.0 / vol(0, 0);
            const double energy_change = (p(0, 0) / d0(0, 0) + visc(0, 0) / d0(0, 0)) * total_flux * recip_volume;
            e1(0, 0) = e0(0, 0) - energy_change;
            d1(0, 0) = d0(0, 0) * volume_change;
          },
          "PdV predict", grid_, interior(), tl::write(energy1_, site_), tl::write(density1_, site_),
          tl::read(xarea_, xpair_), tl::read(yarea_, ypair_), tl::read(volume_, site_), tl::read(density0_, site_),
          tl::read(energy0_, site_), tl::read(pressure_, site_), tl::read(viscosity_, site_),
          tl::read(xvel0_, corners_), tl::read(yvel0_, corners_), tl::gbl(dt_));
      ideal_gas(true);
      update_halo(f_pressure, 1);
      revert();
    } else {
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out e1, Out d1, In xa, In ya, In vol, In d0, In e0, In p, In visc, In xv0, In yv0,
                                 In xv1, In yv1, const double& dt) {
            const double left_flux = (xa(0, 0) * (xv0(0, 0) + xv0(0, 1) + xv1(0, 0) + xv1(0, 1))) * 0.25 * dt;
            const double right_flux = (xa(1, 0) * (xv0(1, 0) + xv0(1, 1) + xv1(1, 0) + xv1(1, 1))) * 0.25 * dt;
            const double bottom_flux = (ya(0, 0) * (yv0(0, 0) + yv0(1, 0) + yv1(0, 0) + yv1(1, 0))) * 0.25 * dt;
            const double top_flux = (ya(0, 1) * (yv0(0, 1) + yv0(1, 1) + yv1(0, 1) + yv1(1, 1))) * 0.25 * dt;
            const double total_flux = right_flux - left_flux + top_flux - bottom_flux;
            const double volume_change = vol(0, 0) / (vol(0, 0) + total_flux);
            const double recip_volume = 1.0 / vol(0, 0);
            const double energy_change = (p(0, 0) / d0(0, 0) + visc(0, 0) / d0(0, 0)) * total_flux * recip_volume;
            e1(0, 0) = e0(0, 0) - energy_change;
            d1(0, 0) = d0(0, 0) * volume_change;
          },
          "PdV correct", grid_, interior(), tl::write(energy1_, site_), tl::write(density1_, site_),
          tl::read(xarea_, xpair_), tl::read(yarea_, ypair_), tl::read(volume_, site_), tl::read(density0_, site_),
          tl::read(energy0_, site_), tl::read(pressure_, site_), tl::read(viscosity_, site_),
          tl::read(xvel0_, corners_), tl::read(yvel0_, corners_), tl::read(xvel1_, corners_), tl::read(yvel1_, corners_),
          tl::gbl(dt_));
    }
  }

  void revert() {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out d1, Out e1, In d0, In e0) {
          d1(0, 0) = d0(0, 0);
          e1(0, 0) = e0(0, 0);
        },
        "revert", grid_, interior(), tl::write(density1_, site_), tl::write(energy1_, site_),
        tl::read(density0_, site_), tl::read(energy0_, site_));
  }

  void accelerate() {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out xv1, Out yv1, In xv0, In yv0, In den, In vol, In xa, In ya, In p, In q,
                               const double& dt) {
          const double nodal_mass = (den(-1, -1) * vol(-1, -1) + den(0, -1) * vol(0, -1) + den(0, 0) * vol(0, 0) +
                                     den(-1, 0) * vol(-1, 0)) *
                                    0.25;
          const double stepbymass = 0.5 * dt / nodal_mass;
          double u = xv0(0, 0) - stepbymass * (xa(0, 0) * (p(0, 0) - p(-1, 0)) + xa(0, -1) * (p(0, -1) - p(-1, -1)));
          double v = yv0(0, 0) - stepbymass * (ya(0, 0) * (p(0, 0) - p(0, -1)) + ya(-1, 0) * (p(-1, 0) - p(-1, -1)));
          u = u - stepbymass * (xa(0, 0) * (q(0, 0) - q(-1, 0)) + xa(0, -1) * (q(0, -1) - q(-1, -1)));
          v = v - stepbymass * (ya(0, 0) * (q(0, 0) - q(0, -1)) + ya(-1, 0) * (q(-1, 0) - q(-1, -1)));
          xv1(0, 0) = u;
          yv1(0, 0) = v;
        },
        "accelerate", grid_, interior_nodes(), tl::write(xvel1_, site_), tl::write(yvel1_, site_),
        tl::read(xvel0_, site_), tl::read(yvel0_, site_), tl::read(density0_, lower_corners_),
        tl::read(volume_, lower_corners_), tl::read(xarea_, ydown_), tl::read(yarea_, xdown_),
        tl::read(pressure_, lower_corners_), tl::read(viscosity_, lower_corners_), tl::gbl(dt_));
  }

  void flux_calc() {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out f, In xa, In xv0, In xv1, const double& dt) {
          f(0, 0) = 0.25 * dt * xa(0, 0) * (xv0(0, 0) + xv0(0, 1) + xv1(0, 0) + xv1(0, 1));
        },
        "flux_calc x", grid_, tl::Range::of(2, {0, nx_ + 1, 0, ny_}), tl::write(vol_flux_x_, site_),
        tl::read(xarea_, site_), tl::read(xvel0_, yup_), tl::read(xvel1_, yup_), tl::gbl(dt_));
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out f, In ya, In yv0, In yv1, const double& dt) {
          f(0, 0) = 0.25 * dt * ya(0, 0) * (yv0(0, 0) + yv0(1, 0) + yv1(0, 0) + yv1(1, 0));
        },
        "flux_calc y", grid_, tl::Range::of(2, {0, nx_, 0, ny_ + 1}), tl::write(vol_flux_y_, site_),
        tl::read(yarea_, site_), tl::read(yvel0_, xup_), tl::read(yvel1_, xup_), tl::gbl(dt_));
  }

  void advection() {
    const bool x_first = advect_x_;
    update_halo(f_energy1 | f_density1 | f_vol_flux_x | f_vol_flux_y, 2);
    advec_cell(x_first, 1);
    update_halo(f_density1 | f_energy1 | f_xvel1 | f_yvel1 | f_mass_flux_x | f_mass_flux_y, 2);
    advec_mom(x_first, 1);
    advec_cell(!x_first, 2);
    update_halo(f_density1 | f_energy1 | f_xvel1 | f_yvel1 | f_mass_flux_x | f_mass_flux_y, 2);
    advec_mom(!x_first, 2);
  }

  // Van Leer limited donor-cell flux of density (d_*) and energy (e_*) through one face. `v` is
  // the volume flux; *_up, *_don and *_dn are the upwind, donor and downwind cell values, the
  // *_pos ones for a positive flux (from the low side), the *_neg ones otherwise; pv_* the donor's
  // pre_vol.
  TESSERA_HOST_DEVICE static void cell_face_flux(double v, double d_up_pos, double d_don_pos, double d_dn_pos,
                                                 double d_up_neg, double d_don_neg, double d_dn_neg, double e_up_pos,
                                                 double e_don_pos, double e_dn_pos, double e_up_neg, double e_don_neg,
                                                 double e_dn_neg, double pv_pos, double pv_neg, double& mass_flux,
                                                 double& ener_flux) {
    constexpr double one_by_six = 1.0 / 6.0;
    const bool pos = v > 0.0;
    const double d_up = pos ? d_up_pos : d_up_neg, d_don = pos ? d_don_pos : d_don_neg,
                 d_dn = pos ? d_dn_pos : d_dn_neg;
    const double e_up = pos ? e_up_pos : e_up_neg, e_don = pos ? e_don_pos : e_don_neg,
                 e_dn = pos ? e_dn_pos : e_dn_neg;
    const double pre_vol = pos ? pv_pos : pv_neg;
    const double sigmat = std::fabs(v) / pre_vol;
    const double sigma3 = (1.0 + sigmat);  // times vertexdx(j)/vertexdx(dif), which is 1 on a uniform mesh
    const double sigma4 = 2.0 - sigmat;
    const double sigmav = sigmat;
    // Both limiters are computed everywhere and then selected, so the loop has no branches.
    auto limiter = [&](double uw, double dw, double s) {
      const double auw = std::fabs(uw), adw = std::fabs(dw);
      const double limited = (1.0 - s) * std::copysign(1.0, dw) *
                             std::min(std::min(auw, adw), one_by_six * (sigma3 * auw + sigma4 * adw));
      return uw * dw > 0.0 ? limited : 0.0;
    };
    mass_flux = v * (d_don + limiter(d_don - d_up, d_dn - d_don, sigmav));
    const double sigmam = std::fabs(mass_flux) / (d_don * pre_vol);
    ener_flux = mass_flux * (e_don + limiter(e_don - e_up, e_dn - e_don, sigmam));
  }

  void advec_cell(bool x_dir, int sweep) {
    if (x_dir) {
      // pre_vol of the cells that donate through faces 0..nx.
      const tl::Range r = tl::Range::of(2, {-1, nx_ + 1, 0, ny_});
      if (sweep == 1)
        tl::par_loop(
            [] TESSERA_HOST_DEVICE(Out pv, In vol, In fx, In fy) {
              pv(0, 0) = vol(0, 0) + (fx(1, 0) - fx(0, 0) + fy(0, 1) - fy(0, 0));
            },
            "advec_cell x pre_vol 1", grid_, r, tl::write(pre_vol_, site_), tl::read(volume_, site_),
            tl::read(vol_flux_x_, xup_), tl::read(vol_flux_y_, yup_));
      else
        tl::par_loop([] TESSERA_HOST_DEVICE(Out pv, In vol, In fx) { pv(0, 0) = vol(0, 0) + fx(1, 0) - fx(0, 0); },
                     "advec_cell x pre_vol 2", grid_, r, tl::write(pre_vol_, site_), tl::read(volume_, site_),
                     tl::read(vol_flux_x_, xup_));
      // Face i lies between cells i-1 and i. (CloverLeaf also computes face nx+1, which the
      // mass_flux_x halo update overwrites before anything reads it.)
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out mf, Out ef, In vf, In d, In e, In pv) {
            double m = 0.0, en = 0.0;
            cell_face_flux(vf(0, 0), d(-2, 0), d(-1, 0), d(0, 0), d(1, 0), d(0, 0), d(-1, 0), e(-2, 0), e(-1, 0),
                           e(0, 0), e(1, 0), e(0, 0), e(-1, 0), pv(-1, 0), pv(0, 0), m, en);
            mf(0, 0) = m;
            ef(0, 0) = en;
          },
          "advec_cell x flux", grid_, tl::Range::of(2, {0, nx_ + 1, 0, ny_}), tl::write(mass_flux_x_, site_),
          tl::write(ener_flux_, site_), tl::read(vol_flux_x_, site_), tl::read(density1_, xwide_),
          tl::read(energy1_, xwide_), tl::read(pre_vol_, xdown_));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out d, Out e, In pv, In mf, In ef, In vf) {
            const double pre_mass = d(0, 0) * pv(0, 0);
            const double post_mass = pre_mass + mf(0, 0) - mf(1, 0);
            const double post_ener = (e(0, 0) * pre_mass + ef(0, 0) - ef(1, 0)) / post_mass;
            const double advec_vol = pv(0, 0) + vf(0, 0) - vf(1, 0);
            d(0, 0) = post_mass / advec_vol;
            e(0, 0) = post_ener;
          },
          "advec_cell x update", grid_, interior(), tl::rw(density1_, site_), tl::rw(energy1_, site_),
          tl::read(pre_vol_, site_), tl::read(mass_flux_x_, xup_), tl::read(ener_flux_, xup_),
          tl::read(vol_flux_x_, xup_));
    } else {
      const tl::Range r = tl::Range::of(2, {0, nx_, -1, ny_ + 1});
      if (sweep == 1)
        tl::par_loop(
            [] TESSERA_HOST_DEVICE(Out pv, In vol, In fx, In fy) {
              pv(0, 0) = vol(0, 0) + (fy(0, 1) - fy(0, 0) + fx(1, 0) - fx(0, 0));
            },
            "advec_cell y pre_vol 1", grid_, r, tl::write(pre_vol_, site_), tl::read(volume_, site_),
            tl::read(vol_flux_x_, xup_), tl::read(vol_flux_y_, yup_));
      else
        tl::par_loop([] TESSERA_HOST_DEVICE(Out pv, In vol, In fy) { pv(0, 0) = vol(0, 0) + fy(0, 1) - fy(0, 0); },
                     "advec_cell y pre_vol 2", grid_, r, tl::write(pre_vol_, site_), tl::read(volume_, site_),
                     tl::read(vol_flux_y_, yup_));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out mf, Out ef, In vf, In d, In e, In pv) {
            double m = 0.0, en = 0.0;
            cell_face_flux(vf(0, 0), d(0, -2), d(0, -1), d(0, 0), d(0, 1), d(0, 0), d(0, -1), e(0, -2), e(0, -1),
                           e(0, 0), e(0, 1), e(0, 0), e(0, -1), pv(0, -1), pv(0, 0), m, en);
            mf(0, 0) = m;
            ef(0, 0) = en;
          },
          "advec_cell y flux", grid_, tl::Range::of(2, {0, nx_, 0, ny_ + 1}), tl::write(mass_flux_y_, site_),
          tl::write(ener_flux_, site_), tl::read(vol_flux_y_, site_), tl::read(density1_, ywide_),
          tl::read(energy1_, ywide_), tl::read(pre_vol_, ydown_));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out d, Out e, In pv, In mf, In ef, In vf) {
            const double pre_mass = d(0, 0) * pv(0, 0);
            const double post_mass = pre_mass + mf(0, 0) - mf(0, 1);
            const double post_ener = (e(0, 0) * pre_mass + ef(0, 0) - ef(0, 1)) / post_mass;
            const double advec_vol = pv(0, 0) + vf(0, 0) - vf(0, 1);
            d(0, 0) = post_mass / advec_vol;
            e(0, 0) = post_ener;
          },
          "advec_cell y update", grid_, interior(), tl::rw(density1_, site_), tl::rw(energy1_, site_),
          tl::read(pre_vol_, site_), tl::read(mass_flux_y_, yup_), tl::read(ener_flux_, yup_),
          tl::read(vol_flux_y_, yup_));
    }
  }

  // The limited momentum flux through one staggered face: `nf` the node (mass) flux; vel_* the
  // velocity at offsets -1, 0, +1, +2 along the sweep; nmp0/nmp1 node_mass_pre at 0 and +1.
  TESSERA_HOST_DEVICE static double mom_face_flux(double nf, double vm1, double v0, double v1, double v2, double nmp0,
                                                  double nmp1, double width) {
    const bool neg = nf < 0.0;
    const double upwind = neg ? v2 : vm1, donor = neg ? v1 : v0, downwind = neg ? v0 : v1;
    const double mass_donor = neg ? nmp1 : nmp0;
    const double sigma = std::fabs(nf) / mass_donor;
    const double vdiffuw = donor - upwind, vdiffdw = downwind - donor;
    const double auw = std::fabs(vdiffuw), adw = std::fabs(vdiffdw);
    const double wind = vdiffdw <= 0.0 ? -1.0 : 1.0;
    const double limited =
        wind * std::min(std::min(width * ((2.0 - sigma) * adw / width + (1.0 + sigma) * auw / width) / 6.0, auw), adw);
    const double limiter = vdiffuw * vdiffdw > 0.0 ? limited : 0.0;
    const double advec_vel = donor + (1.0 - sigma) * limiter;
    return advec_vel * nf;
  }

  void advec_mom(bool x_dir, int sweep) {
    // post_vol: the cell volumes after the first sweep; on the second sweep the volume itself.
    tl::Dataset<double>* post_vol = &volume_;
    if (sweep == 1) {
      post_vol = &post_vol_;
      const tl::Range all_cells = tl::Range::of(2, {-2, nx_ + 2, -2, ny_ + 2});
      if (x_dir)
        tl::par_loop([] TESSERA_HOST_DEVICE(Out pv, In vol, In fy) { pv(0, 0) = vol(0, 0) + fy(0, 1) - fy(0, 0); },
                     "advec_mom post_vol x", grid_, all_cells, tl::write(post_vol_, site_), tl::read(volume_, site_),
                     tl::read(vol_flux_y_, yup_));
      else
        tl::par_loop([] TESSERA_HOST_DEVICE(Out pv, In vol, In fx) { pv(0, 0) = vol(0, 0) + fx(1, 0) - fx(0, 0); },
                     "advec_mom post_vol y", grid_, all_cells, tl::write(post_vol_, site_), tl::read(volume_, site_),
                     tl::read(vol_flux_x_, xup_));
    }
    auto node_mass = [] TESSERA_HOST_DEVICE(Out post, Out pre, In den, In pv, In nf, const int& dir) {
      const double m = 0.25 * (den(0, -1) * pv(0, -1) + den(0, 0) * pv(0, 0) + den(-1, -1) * pv(-1, -1) +
                               den(-1, 0) * pv(-1, 0));
      post(0, 0) = m;
      pre(0, 0) = dir == 0 ? m - nf(-1, 0) + nf(0, 0) : m - nf(0, -1) + nf(0, 0);
    };
    if (x_dir) {
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out nf, In mf) { nf(0, 0) = 0.25 * (mf(0, -1) + mf(0, 0) + mf(1, -1) + mf(1, 0)); },
          "advec_mom node_flux x", grid_, tl::Range::of(2, {-2, nx_ + 2, 0, ny_ + 1}), tl::write(node_flux_, site_),
          tl::read(mass_flux_x_, xup_ydown_));
      tl::par_loop(node_mass, "advec_mom node_mass x", grid_, tl::Range::of(2, {-1, nx_ + 2, 0, ny_ + 1}),
                   tl::write(node_mass_post_, site_), tl::write(node_mass_pre_, site_), tl::read(density1_, lower_corners_),
                   tl::read(*post_vol, lower_corners_), tl::read(node_flux_, xdown_), tl::gbl(0));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out mfx, Out mfy, In nf, In nmp, In u, In v, const double& dx) {
            mfx(0, 0) = mom_face_flux(nf(0, 0), u(-1, 0), u(0, 0), u(1, 0), u(2, 0), nmp(0, 0), nmp(1, 0), dx);
            mfy(0, 0) = mom_face_flux(nf(0, 0), v(-1, 0), v(0, 0), v(1, 0), v(2, 0), nmp(0, 0), nmp(1, 0), dx);
          },
          "advec_mom flux x", grid_, tl::Range::of(2, {-1, nx_ + 1, 0, ny_ + 1}), tl::write(mom_flux_x_, site_),
          tl::write(mom_flux_y_, site_), tl::read(node_flux_, site_), tl::read(node_mass_pre_, xup_),
          tl::read(xvel1_, xmom_), tl::read(yvel1_, xmom_), tl::gbl(dx_));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out u, Out v, In nmpre, In nmpost, In mfx, In mfy) {
            u(0, 0) = (u(0, 0) * nmpre(0, 0) + mfx(-1, 0) - mfx(0, 0)) / nmpost(0, 0);
            v(0, 0) = (v(0, 0) * nmpre(0, 0) + mfy(-1, 0) - mfy(0, 0)) / nmpost(0, 0);
          },
          "advec_mom update x", grid_, interior_nodes(), tl::rw(xvel1_, site_), tl::rw(yvel1_, site_),
          tl::read(node_mass_pre_, site_), tl::read(node_mass_post_, site_), tl::read(mom_flux_x_, xdown_),
          tl::read(mom_flux_y_, xdown_));
    } else {
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out nf, In mf) { nf(0, 0) = 0.25 * (mf(-1, 0) + mf(0, 0) + mf(-1, 1) + mf(0, 1)); },
          "advec_mom node_flux y", grid_, tl::Range::of(2, {0, nx_ + 1, -2, ny_ + 2}), tl::write(node_flux_, site_),
          tl::read(mass_flux_y_, yup_xdown_));
      tl::par_loop(node_mass, "advec_mom node_mass y", grid_, tl::Range::of(2, {0, nx_ + 1, -1, ny_ + 2}),
                   tl::write(node_mass_post_, site_), tl::write(node_mass_pre_, site_), tl::read(density1_, lower_corners_),
                   tl::read(*post_vol, lower_corners_), tl::read(node_flux_, ydown_), tl::gbl(1));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out mfx, Out mfy, In nf, In nmp, In u, In v, const double& dy) {
            mfx(0, 0) = mom_face_flux(nf(0, 0), u(0, -1), u(0, 0), u(0, 1), u(0, 2), nmp(0, 0), nmp(0, 1), dy);
            mfy(0, 0) = mom_face_flux(nf(0, 0), v(0, -1), v(0, 0), v(0, 1), v(0, 2), nmp(0, 0), nmp(0, 1), dy);
          },
          "advec_mom flux y", grid_, tl::Range::of(2, {0, nx_ + 1, -1, ny_ + 1}), tl::write(mom_flux_x_, site_),
          tl::write(mom_flux_y_, site_), tl::read(node_flux_, site_), tl::read(node_mass_pre_, yup_),
          tl::read(xvel1_, ymom_), tl::read(yvel1_, ymom_), tl::gbl(dy_));
      tl::par_loop(
          [] TESSERA_HOST_DEVICE(Out u, Out v, In nmpre, In nmpost, In mfx, In mfy) {
            u(0, 0) = (u(0, 0) * nmpre(0, 0) + mfx(0, -1) - mfx(0, 0)) / nmpost(0, 0);
            v(0, 0) = (v(0, 0) * nmpre(0, 0) + mfy(0, -1) - mfy(0, 0)) / nmpost(0, 0);
          },
          "advec_mom update y", grid_, interior_nodes(), tl::rw(xvel1_, site_), tl::rw(yvel1_, site_),
          tl::read(node_mass_pre_, site_), tl::read(node_mass_post_, site_), tl::read(mom_flux_x_, ydown_),
          tl::read(mom_flux_y_, ydown_));
    }
  }

  void reset_field() {
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out d0, Out e0, In d1, In e1) {
          d0(0, 0) = d1(0, 0);
          e0(0, 0) = e1(0, 0);
        },
        "reset_field cells", grid_, interior(), tl::write(density0_, site_), tl::write(energy0_, site_),
        tl::read(density1_, site_), tl::read(energy1_, site_));
    tl::par_loop(
        [] TESSERA_HOST_DEVICE(Out u0, Out v0, In u1, In v1) {
          u0(0, 0) = u1(0, 0);
          v0(0, 0) = v1(0, 0);
        },
        "reset_field nodes", grid_, interior_nodes(), tl::write(xvel0_, site_), tl::write(yvel0_, site_),
        tl::read(xvel1_, site_), tl::read(yvel1_, site_));
  }

 private:
  // ---- reflective boundaries ------------------------------------------------------------------

  // CloverLeaf's update_halo_kernel for the external faces of the one chunk, to `depth` (1 or 2):
  // one par_loop per side for all the requested fields of a kind, bottom and top first, then left
  // and right over rows that include the new bottom and top layers (so the corners are CloverLeaf's).
  // Cell fields mirror about the face (-1 <- 0, -2 <- 1); node fields about the boundary node
  // (-1 <- 1, -2 <- 2); the velocity normal to a side and the face fluxes through it change sign.
  enum class Kind { cell, node, xflux, yflux };
  struct HaloField {
    tl::Dataset<double>* d;
    double sign_y, sign_x;  // on the bottom and top sides; on the left and right sides
  };

  template <std::size_t N>
  void reflect_side(const std::vector<HaloField>& f, bool vertical_sides, const tl::Range& r, int axis, int mirror,
                    const std::string& name) {
    std::array<tl::Dataset<double>*, N> d{};
    std::array<double, N> sign{};
    for (std::size_t k = 0; k < N; ++k) {
      d[k] = f[k].d;
      sign[k] = vertical_sides ? f[k].sign_x : f[k].sign_y;
    }
    std::vector<tl::Offset> from;
    for (int i = r.begin[axis]; i < r.end[axis]; ++i)
      from.push_back(axis == 0 ? tl::Offset{mirror - 2 * i, 0, 0} : tl::Offset{0, mirror - 2 * i, 0});
    const tl::Stencil source(2, from, "halo mirror");
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      tl::par_loop(detail::Reflect<N>{axis, mirror, sign}, name, grid_, r, tl::write(*d[I], site_)...,
                   tl::read(*d[I], source)..., tl::idx());
    }(std::make_index_sequence<N>{});
  }

  void reflect(const std::vector<HaloField>& f, bool vertical_sides, const tl::Range& r, int axis, int mirror,
               const std::string& name) {
    switch (f.size()) {
      case 0: return;
      case 1: return reflect_side<1>(f, vertical_sides, r, axis, mirror, name);
      case 2: return reflect_side<2>(f, vertical_sides, r, axis, mirror, name);
      case 3: return reflect_side<3>(f, vertical_sides, r, axis, mirror, name);
      case 4: return reflect_side<4>(f, vertical_sides, r, axis, mirror, name);
      case 5: return reflect_side<5>(f, vertical_sides, r, axis, mirror, name);
      case 6: return reflect_side<6>(f, vertical_sides, r, axis, mirror, name);
      case 7: return reflect_side<7>(f, vertical_sides, r, axis, mirror, name);
      default: throw tessera::Error("cloverleaf: update_halo takes at most 7 fields of a kind");
    }
  }

  void halo(const std::vector<HaloField>& f, Kind kind, int e) {
    if (f.empty()) return;
    const int nx = nx_, ny = ny_;
    // Past-the-end index of the field in x and y, and the mirror index of each side.
    const int xe = kind == Kind::cell || kind == Kind::yflux ? nx : nx + 1;
    const int ye = kind == Kind::cell || kind == Kind::xflux ? ny : ny + 1;
    int bottom = 0, top = 2 * ny, left = 0, right = 2 * nx;
    if (kind == Kind::cell) bottom = left = -1, top = 2 * ny - 1, right = 2 * nx - 1;
    if (kind == Kind::xflux) top = 2 * ny - 2;
    if (kind == Kind::yflux) right = 2 * nx - 2;
    const std::string what = kind == Kind::cell ? "cells" : kind == Kind::node ? "nodes" : kind == Kind::xflux ? "x faces" : "y faces";
    auto R = [](int x0, int x1, int y0, int y1) { return tl::Range::of(2, {x0, x1, y0, y1}); };
    reflect(f, false, R(-e, xe + e, -e, 0), 1, bottom, "update_halo bottom " + what);
    reflect(f, false, R(-e, xe + e, ye, ye + e), 1, top, "update_halo top " + what);
    reflect(f, true, R(-e, 0, -e, ye + e), 0, left, "update_halo left " + what);
    reflect(f, true, R(xe, xe + e, -e, ye + e), 0, right, "update_halo right " + what);
  }

  void update_halo(unsigned fields, int depth) {
    std::vector<HaloField> cell, node, xflux, yflux;
    auto add = [&](std::vector<HaloField>& to, unsigned f, tl::Dataset<double>& d, double sy, double sx) {
      if (fields & f) to.push_back({&d, sy, sx});
    };
    add(cell, f_density0, density0_, 1.0, 1.0);
    add(cell, f_density1, density1_, 1.0, 1.0);
    add(cell, f_energy0, energy0_, 1.0, 1.0);
    add(cell, f_energy1, energy1_, 1.0, 1.0);
    add(cell, f_pressure, pressure_, 1.0, 1.0);
    add(cell, f_viscosity, viscosity_, 1.0, 1.0);
    add(cell, f_soundspeed, soundspeed_, 1.0, 1.0);
    add(node, f_xvel0, xvel0_, 1.0, -1.0);
    add(node, f_xvel1, xvel1_, 1.0, -1.0);
    add(node, f_yvel0, yvel0_, -1.0, 1.0);
    add(node, f_yvel1, yvel1_, -1.0, 1.0);
    add(xflux, f_vol_flux_x, vol_flux_x_, 1.0, -1.0);
    add(xflux, f_mass_flux_x, mass_flux_x_, 1.0, -1.0);
    add(yflux, f_vol_flux_y, vol_flux_y_, -1.0, 1.0);
    add(yflux, f_mass_flux_y, mass_flux_y_, -1.0, 1.0);
    halo(cell, Kind::cell, depth);
    halo(node, Kind::node, depth);
    halo(xflux, Kind::xflux, depth);
    halo(yflux, Kind::yflux, depth);
  }

  // ---- state --------------------------------------------------------------------------------

  Deck deck_;
  int nx_, ny_;
  double dx_, dy_;
  tl::Block grid_;
  tl::Dataset<double> density0_, density1_, energy0_, energy1_, pressure_, viscosity_, soundspeed_, volume_;
  tl::Dataset<double> xvel0_, xvel1_, yvel0_, yvel1_;
  tl::Dataset<double> vol_flux_x_, mass_flux_x_, xarea_, vol_flux_y_, mass_flux_y_, yarea_;
  tl::Dataset<double> pre_vol_, post_vol_, ener_flux_, node_flux_, node_mass_post_, node_mass_pre_, mom_flux_x_,
      mom_flux_y_;
  tl::Reduction<double> dtc_, dtu_, dtv_, dtdiv_;
  tl::Reduction<double> sum_vol_, sum_mass_, sum_ie_, sum_ke_, sum_press_;

  // Stencils, named by the offsets they hold.
  const tl::Stencil site_ = detail::stencil({{0, 0, 0}}, "00");
  const tl::Stencil cross_ = detail::stencil({{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "P10_M10_0P1_0M1");
  const tl::Stencil corners_ = detail::stencil({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, "00_P10_0P1_P1P1");
  const tl::Stencil lower_corners_ =
      detail::stencil({{0, 0, 0}, {-1, 0, 0}, {0, -1, 0}, {-1, -1, 0}}, "00_M10_0M1_M1M1");
  const tl::Stencil xpair_ = detail::stencil({{0, 0, 0}, {1, 0, 0}}, "00_P10");
  const tl::Stencil ypair_ = detail::stencil({{0, 0, 0}, {0, 1, 0}}, "00_0P1");
  const tl::Stencil xup_ = xpair_;
  const tl::Stencil yup_ = ypair_;
  const tl::Stencil xdown_ = detail::stencil({{0, 0, 0}, {-1, 0, 0}}, "00_M10");
  const tl::Stencil ydown_ = detail::stencil({{0, 0, 0}, {0, -1, 0}}, "00_0M1");
  const tl::Stencil xwide_ = detail::stencil({{-2, 0, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}}, "M20_M10_00_P10");
  const tl::Stencil ywide_ = detail::stencil({{0, -2, 0}, {0, -1, 0}, {0, 0, 0}, {0, 1, 0}}, "0M2_0M1_00_0P1");
  const tl::Stencil xmom_ = detail::stencil({{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, "M10_00_P10_P20");
  const tl::Stencil ymom_ = detail::stencil({{0, -1, 0}, {0, 0, 0}, {0, 1, 0}, {0, 2, 0}}, "0M1_00_0P1_0P2");
  const tl::Stencil xup_ydown_ = detail::stencil({{0, -1, 0}, {0, 0, 0}, {1, -1, 0}, {1, 0, 0}}, "00_0M1_P10_P1M1");
  const tl::Stencil yup_xdown_ = detail::stencil({{-1, 0, 0}, {0, 0, 0}, {-1, 1, 0}, {0, 1, 0}}, "00_M10_0P1_M1P1");

  int step_ = 0;
  double time_ = 0.0, dt_ = 0.0, dtold_ = 0.0;
  bool advect_x_ = true;
};

}  // namespace cloverleaf
