// Toro ch. 4, written from the equations (numbers refer to the book's equations).

#include "euler2d/exact_riemann.hpp"

#include <tessera/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace euler2d {
namespace {

/// The constants of Toro's programs, from gamma.
struct Gamma {
  explicit Gamma(double g)
      : gamma(g), g1((g - 1) / (2 * g)), g2((g + 1) / (2 * g)), g3(2 * g / (g - 1)), g4(2 / (g - 1)),
        g5(2 / (g + 1)), g6((g - 1) / (g + 1)), g7((g - 1) / 2) {}
  double gamma, g1, g2, g3, g4, g5, g6, g7;
};

double sound_speed(const GasState& w, const Gamma& g) { return std::sqrt(g.gamma * w.p / w.rho); }

/// f_K(p) and its derivative (eqs. 4.6-4.7 and 4.37): a shock for p > p_K, else a rarefaction.
void pressure_function(double p, const GasState& k, double c, const Gamma& g, double& f, double& df) {
  if (p <= k.p) {
    const double ratio = p / k.p;
    f = g.g4 * c * (std::pow(ratio, g.g1) - 1);
    df = 1 / (k.rho * c) * std::pow(ratio, -g.g2);
  } else {
    const double a = g.g5 / k.rho, b = g.g6 * k.p;
    const double q = std::sqrt(a / (b + p));
    f = (p - k.p) * q;
    df = (1 - 0.5 * (p - k.p) / (b + p)) * q;
  }
}

/// The starting guess of §4.3.1 (Toro's GUESSP): the linearised (PVRS) pressure when the data
/// are close, else the two-rarefaction or the two-shock approximation.
double initial_pressure(const GasState& l, const GasState& r, double cl, double cr, const Gamma& g) {
  const double q_user = 2;
  const double cup = 0.25 * (l.rho + r.rho) * (cl + cr);
  const double ppv = std::max(0.0, 0.5 * (l.p + r.p) + 0.5 * (l.u - r.u) * cup);
  const double pmin = std::min(l.p, r.p), pmax = std::max(l.p, r.p);
  if (pmax / pmin <= q_user && pmin <= ppv && ppv <= pmax) return ppv;
  if (ppv < pmin) {
    const double pq = std::pow(l.p / r.p, g.g1);
    const double um = (pq * l.u / cl + r.u / cr + g.g4 * (pq - 1)) / (pq / cl + 1 / cr);
    const double ptl = 1 + g.g7 * (l.u - um) / cl, ptr = 1 + g.g7 * (um - r.u) / cr;
    return 0.5 * (l.p * std::pow(ptl, g.g3) + r.p * std::pow(ptr, g.g3));
  }
  const double gel = std::sqrt((g.g5 / l.rho) / (g.g6 * l.p + ppv));
  const double ger = std::sqrt((g.g5 / r.rho) / (g.g6 * r.p + ppv));
  return (gel * l.p + ger * r.p - (r.u - l.u)) / (gel + ger);
}

double star_density(const GasState& k, double p_star, const Gamma& g) {
  const double ratio = p_star / k.p;
  if (p_star > k.p) return k.rho * (ratio + g.g6) / (g.g6 * ratio + 1);  // shock (4.50, 4.57)
  return k.rho * std::pow(ratio, 1 / g.gamma);                           // rarefaction (4.53, 4.60)
}

void check_state(const GasState& w, const char* side) {
  if (!(w.rho > 0) || !(w.p > 0))
    throw tessera::Error(std::string("exact Riemann solver: the ") + side + " state has density " +
                         std::to_string(w.rho) + " and pressure " + std::to_string(w.p) +
                         "; both must be positive (vacuum states are not supported)");
}

}  // namespace

StarState star_state(const GasState& left, const GasState& right, double gamma) {
  if (!(gamma > 1)) throw tessera::Error("exact Riemann solver: gamma is " + std::to_string(gamma) + "; it must exceed 1");
  check_state(left, "left");
  check_state(right, "right");
  const Gamma g(gamma);
  const double cl = sound_speed(left, g), cr = sound_speed(right, g);
  // Pressure positivity condition (4.40): otherwise the two rarefactions leave a vacuum between them.
  if (g.g4 * (cl + cr) <= right.u - left.u)
    throw tessera::Error("exact Riemann solver: the states generate vacuum (2(cL + cR)/(gamma - 1) = " +
                         std::to_string(g.g4 * (cl + cr)) + " <= uR - uL = " + std::to_string(right.u - left.u) + ")");

  // Newton on f(p) = fL(p) + fR(p) + uR - uL (4.5). The convergence test is on the relative
  // change (4.44), at 1e-14 rather than Toro's 1e-6, so the star values are good to round-off.
  const double tolerance = 1e-14;
  double p = std::max(initial_pressure(left, right, cl, cr, g), tolerance);
  StarState s;
  for (int it = 1; it <= 100; ++it) {
    double fl = 0, dfl = 0, fr = 0, dfr = 0;
    pressure_function(p, left, cl, g, fl, dfl);
    pressure_function(p, right, cr, g, fr, dfr);
    double next = p - (fl + fr + right.u - left.u) / (dfl + dfr);
    if (next < 0) next = tolerance;  // as Toro's STARPU: restart from a tiny positive pressure
    const double change = 2 * std::fabs(next - p) / (next + p);
    p = next;
    if (change < tolerance) {
      s.iterations = it;
      break;
    }
  }
  if (s.iterations == 0)
    throw tessera::Error("exact Riemann solver: Newton's iteration for p* did not converge in 100 steps (last p = " +
                         std::to_string(p) + ")");
  double fl = 0, dfl = 0, fr = 0, dfr = 0;
  pressure_function(p, left, cl, g, fl, dfl);
  pressure_function(p, right, cr, g, fr, dfr);
  s.p = p;
  s.u = 0.5 * (left.u + right.u) + 0.5 * (fr - fl);  // (4.9)
  s.rho_l = star_density(left, p, g);
  s.rho_r = star_density(right, p, g);
  return s;
}

GasState sample(const GasState& left, const GasState& right, double gamma, const StarState& star, double s) {
  const Gamma g(gamma);
  if (s <= star.u) {  // left of the contact
    const double cl = sound_speed(left, g);
    if (star.p > left.p) {  // left shock, speed (4.52)
      const double shock = left.u - cl * std::sqrt(g.g2 * star.p / left.p + g.g1);
      return s <= shock ? left : GasState{star.rho_l, star.u, star.p};
    }
    const double head = left.u - cl;                                // (4.55)
    const double tail = star.u - cl * std::pow(star.p / left.p, g.g1);  // (4.55), c*L from (4.54)
    if (s <= head) return left;
    if (s >= tail) return GasState{star.rho_l, star.u, star.p};
    const double c = g.g5 + g.g6 / cl * (left.u - s);  // inside the fan (4.56)
    return GasState{left.rho * std::pow(c, g.g4), g.g5 * (cl + g.g7 * left.u + s), left.p * std::pow(c, g.g3)};
  }
  const double cr = sound_speed(right, g);
  if (star.p > right.p) {  // right shock (4.59)
    const double shock = right.u + cr * std::sqrt(g.g2 * star.p / right.p + g.g1);
    return s >= shock ? right : GasState{star.rho_r, star.u, star.p};
  }
  const double head = right.u + cr;                                  // (4.62)
  const double tail = star.u + cr * std::pow(star.p / right.p, g.g1);  // (4.62), c*R from (4.61)
  if (s >= head) return right;
  if (s <= tail) return GasState{star.rho_r, star.u, star.p};
  const double c = g.g5 - g.g6 / cr * (right.u - s);  // (4.63)
  return GasState{right.rho * std::pow(c, g.g4), g.g5 * (-cr + g.g7 * right.u + s), right.p * std::pow(c, g.g3)};
}

GasState sample(const GasState& left, const GasState& right, double gamma, double x_over_t) {
  return sample(left, right, gamma, star_state(left, right, gamma), x_over_t);
}

}  // namespace euler2d
