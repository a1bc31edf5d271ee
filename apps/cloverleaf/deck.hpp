#pragma once
// The CloverLeaf input deck (`clover.in`): the keys between `*clover` and `*endclover`, with
// CloverLeaf's defaults (UK-MAC/CloverLeaf_ref read_input.f90). Words are separated by blanks or
// '='; a key takes the word after it as its value; unknown words are skipped, as CloverLeaf
// skips them. A value that is not a number is a tessera::Error naming the deck, line and key.
//
//   *clover
//    state 1 density=0.2 energy=1.0
//    state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
//    x_cells=10
//    end_time=3.0
//    test_problem 1
//   *endclover

#include <tessera/core/error.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace cloverleaf {

enum class Geometry { rectangle, circle, point };

/// One material state. State 1 is the background and fills the whole mesh; each later state
/// overwrites the cells its geometry covers, in order.
struct State {
  bool defined = false;
  double density = 0.0, energy = 0.0, xvel = 0.0, yvel = 0.0;
  double xmin = 0.0, xmax = 0.0, ymin = 0.0, ymax = 0.0, radius = 0.0;
  Geometry geometry = Geometry::rectangle;
};

struct Deck {
  double xmin = 0.0, ymin = 0.0, xmax = 100.0, ymax = 100.0;
  int x_cells = 10, y_cells = 10;
  double end_time = 10.0;
  long end_step = std::numeric_limits<int>::max();
  double dtinit = 0.1, dtmax = 1.0, dtmin = 1.0e-7, dtrise = 1.5;
  double dtc_safe = 0.7, dtu_safe = 0.5, dtv_safe = 0.5, dtdiv_safe = 0.7;
  int visit_frequency = 0, summary_frequency = 10, test_problem = 0;
  std::vector<State> states;  // states[0] is state 1
};

namespace detail {

inline std::string where(const std::string& source, int line) {
  return "deck '" + source + "' line " + std::to_string(line) + ": ";
}

inline double real_value(const std::string& source, int line, const std::string& key, const std::string& given) {
  // Fortran also writes exponents with d (1.0d-3).
  std::string word = given;
  for (char& c : word)
    if (c == 'd' || c == 'D') c = 'e';
  double v = 0.0;
  const char* end = word.data() + word.size();
  const char* first = word.data() + (!word.empty() && word[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, end, v);
  if (word.empty() || ec != std::errc() || ptr != end || !std::isfinite(v))
    throw tessera::Error(where(source, line) + key + " expects a number, got '" + given + "'");
  return v;
}

inline long int_value(const std::string& source, int line, const std::string& key, const std::string& word) {
  long v = 0;
  const char* end = word.data() + word.size();
  const char* first = word.data() + (!word.empty() && word[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, end, v);
  if (word.empty() || ec != std::errc() || ptr != end)
    throw tessera::Error(where(source, line) + key + " expects an integer, got '" + word + "'");
  return v;
}

}  // namespace detail

/// Reads a deck from `in`; `source` names it in messages. Throws tessera::Error for a malformed
/// value, a missing value, a state defined twice or not at all, no states, or a bad mesh.
inline Deck parse_deck(std::istream& in, const std::string& source) {
  Deck d;
  std::vector<std::pair<int, State>> states;  // (number, state)
  bool inside = false, seen = false;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (const auto bang = text.find('!'); bang != std::string::npos) text.erase(bang);
    // Keys are matched in lower case; values keep their spelling for messages.
    for (char& c : text) c = c == '=' ? ' ' : c;
    std::istringstream words_in(text);
    std::vector<std::string> w, lower;
    for (std::string s; words_in >> s;) {
      w.push_back(s);
      for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
      lower.push_back(s);
    }
    if (w.empty()) continue;
    if (lower[0] == "*clover") {
      inside = seen = true;
      continue;
    }
    if (lower[0] == "*endclover") {
      inside = false;
      continue;
    }
    if (!inside) continue;
    for (std::size_t t = 0; t < w.size(); ++t) {
      const std::string key = lower[t];
      auto next = [&]() -> const std::string& {
        if (t + 1 >= w.size()) throw tessera::Error(detail::where(source, line) + key + " needs a value");
        return w[++t];
      };
      auto real = [&]() { return detail::real_value(source, line, key, next()); };
      auto integer = [&]() { return detail::int_value(source, line, key, next()); };
      auto count = [&](long lo) {
        const long v = integer();
        if (v < lo || v > std::numeric_limits<int>::max())
          throw tessera::Error(detail::where(source, line) + key + " must be at least " + std::to_string(lo) +
                               ", got " + std::to_string(v));
        return int(v);
      };
      if (key == "state") {
        const long n = integer();
        if (n < 1 || n > 1000)
          throw tessera::Error(detail::where(source, line) + "state number must be 1 to 1000, got " + std::to_string(n));
        for (const auto& s : states)
          if (s.first == n) throw tessera::Error(detail::where(source, line) + "state " + std::to_string(n) + " defined twice");
        State s;
        s.defined = true;
        for (++t; t < w.size(); ++t) {
          const std::string prop = lower[t];
          auto pval = [&]() {
            if (t + 1 >= w.size()) throw tessera::Error(detail::where(source, line) + prop + " needs a value");
            return detail::real_value(source, line, prop, w[++t]);
          };
          if (prop == "density") s.density = pval();
          else if (prop == "energy") s.energy = pval();
          else if (prop == "xvel") s.xvel = pval();
          else if (prop == "yvel") s.yvel = pval();
          else if (prop == "xmin") s.xmin = pval();
          else if (prop == "xmax") s.xmax = pval();
          else if (prop == "ymin") s.ymin = pval();
          else if (prop == "ymax") s.ymax = pval();
          else if (prop == "radius") s.radius = pval();
          else if (prop == "geometry") {
            if (t + 1 >= w.size()) throw tessera::Error(detail::where(source, line) + "geometry needs a value");
            const std::string g = lower[++t];
            if (g == "rectangle") s.geometry = Geometry::rectangle;
            else if (g == "circle") s.geometry = Geometry::circle;
            else if (g == "point") s.geometry = Geometry::point;
            else
              throw tessera::Error(detail::where(source, line) + "geometry expects rectangle, circle or point, got '" + g + "'");
          }
        }
        states.emplace_back(int(n), s);
        break;
      }
      if (key == "initial_timestep") d.dtinit = real();
      else if (key == "max_timestep") d.dtmax = real();
      else if (key == "timestep_rise") d.dtrise = real();
      else if (key == "end_time") d.end_time = real();
      else if (key == "end_step") d.end_step = count(0);
      else if (key == "xmin") d.xmin = real();
      else if (key == "xmax") d.xmax = real();
      else if (key == "ymin") d.ymin = real();
      else if (key == "ymax") d.ymax = real();
      else if (key == "x_cells") d.x_cells = count(1);
      else if (key == "y_cells") d.y_cells = count(1);
      else if (key == "visit_frequency") d.visit_frequency = count(0);
      else if (key == "summary_frequency") d.summary_frequency = count(0);
      else if (key == "test_problem") d.test_problem = count(0);
      else if (key == "dtmin") d.dtmin = real();
      else if (key == "dtc_safe") d.dtc_safe = real();
      else if (key == "dtu_safe") d.dtu_safe = real();
      else if (key == "dtv_safe") d.dtv_safe = real();
      else if (key == "dtdiv_safe") d.dtdiv_safe = real();
      // Anything else (tiles_per_chunk, profiler_on, use_c_kernels, ...) is skipped.
    }
  }
  if (!seen) throw tessera::Error("deck '" + source + "': no *clover section");
  if (states.empty()) throw tessera::Error("deck '" + source + "': no states defined");
  int max_state = 0;
  for (const auto& s : states) max_state = std::max(max_state, s.first);
  d.states.assign(std::size_t(max_state), State{});
  for (const auto& s : states) d.states[std::size_t(s.first - 1)] = s.second;
  for (int n = 1; n <= max_state; ++n)
    if (!d.states[std::size_t(n - 1)].defined)
      throw tessera::Error("deck '" + source + "': state " + std::to_string(n) + " is not defined");
  if (!(d.xmax > d.xmin) || !(d.ymax > d.ymin))
    throw tessera::Error("deck '" + source + "': the mesh needs xmax > xmin and ymax > ymin");
  if (!(d.dtinit > 0.0) || !(d.dtmax > 0.0))
    throw tessera::Error("deck '" + source + "': initial_timestep and max_timestep must be positive");
  // As CloverLeaf does: move each state's edges a hundredth of a cell inwards, so that an edge on a
  // cell boundary does not put the state one cell further through round-off.
  const double dx = (d.xmax - d.xmin) / double(d.x_cells), dy = (d.ymax - d.ymin) / double(d.y_cells);
  for (std::size_t n = 1; n < d.states.size(); ++n) {
    State& s = d.states[n];
    s.xmin += dx / 100.0;
    s.ymin += dy / 100.0;
    s.xmax -= dx / 100.0;
    s.ymax -= dy / 100.0;
  }
  return d;
}

// CloverLeaf's built-in default problem (test problem 1), what the app runs without --deck
// (OPS apps/c/CloverLeaf/clover.in_default, as decks/clover.in_default).
inline constexpr const char* default_deck_text = R"(*clover
 state 1 density=0.2 energy=1.0
 state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
 x_cells=10
 y_cells=2
 xmin=0.0
 ymin=0.0
 xmax=10.0
 ymax=2.0
 initial_timestep=0.04
 timestep_rise=1.5
 max_timestep=0.04
 end_time=3.0
 test_problem 1
*endclover
)";

inline Deck parse_deck_text(const std::string& text, const std::string& source = "<text>") {
  std::istringstream in(text);
  return parse_deck(in, source);
}

inline Deck read_deck(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw tessera::Error("cannot open deck '" + path + "'");
  return parse_deck(in, path);
}

/// CloverLeaf's reference kinetic energies at the end of test problems 1-5 (UK-MAC/CloverLeaf_ref
/// field_summary.f90; 1 = clover.in_default, 2 = clover_bm_short.in, 3 = clover_bm.in,
/// 4 = clover_bm16_short.in, 5 = clover_bm16.in). 0 for any other number.
inline double expected_kinetic_energy(int test_problem) {
  switch (test_problem) {
    case 1: return 1.82280367310258;
    case 2: return 1.19316898756307;
    case 3: return 2.58984003503994;
    case 4: return 0.307475452287895;
    case 5: return 4.85350315783719;
    default: return 0.0;
  }
}

}  // namespace cloverleaf
