#include "input.hpp"

#include <tessera/core/error.hpp>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace lb {

namespace {

struct Line {
  const std::string& file;
  int number;
  std::string key;
  [[noreturn]] void fail(const std::string& what) const {
    throw tessera::Error(file + " line " + std::to_string(number) + ": " + key + " " + what);
  }
};

int parse_int(const Line& line, std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    line.fail("expects an integer, got '" + std::string(text) + "'");
  return value;
}

double parse_double(const Line& line, std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !(value == value) || value - value != 0)
    line.fail("expects a finite number, got '" + std::string(text) + "'");
  return value;
}

std::array<int, 3> parse_triple(const Line& line, std::string_view text) {
  std::array<int, 3> v{};
  std::size_t start = 0;
  for (int d = 0; d < 3; ++d) {
    const std::size_t end = d < 2 ? text.find('_', start) : text.size();
    if (end == std::string_view::npos) line.fail("expects three integers as N_N_N, got '" + std::string(text) + "'");
    v[d] = parse_int(line, text.substr(start, end - start));
    start = end + 1;
  }
  return v;
}

std::array<int, 3> parse_flags(const Line& line, std::string_view text) {
  auto v = parse_triple(line, text);
  for (int x : v)
    if (x != 0 && x != 1) line.fail("expects 0 or 1 per axis, got '" + std::string(text) + "'");
  return v;
}

bool parse_switch(const Line& line, std::string_view text) {
  if (text == "on" || text == "yes") return true;
  if (text == "off" || text == "no") return false;
  line.fail("expects on or off, got '" + std::string(text) + "'");
}

void expect(const Line& line, std::string_view text, std::string_view wanted, const std::string& why) {
  if (text != wanted) line.fail("'" + std::string(text) + "' is not supported: " + why);
}

}  // namespace

Parameters parse_input(std::string_view text, const std::string& name) {
  Parameters p;
  std::istringstream in{std::string(text)};
  std::string raw;
  int number = 0;
  bool periodic_given = false;
  while (std::getline(in, raw)) {
    ++number;
    if (auto hash = raw.find('#'); hash != std::string::npos) raw.erase(hash);
    std::istringstream words(raw);
    std::string key, value, extra;
    if (!(words >> key)) continue;
    Line line{name, number, key};
    if (!(words >> value)) line.fail("has no value");
    if (words >> extra) line.fail("has more than one value ('" + value + " " + extra + "')");
    ++p.parameters_read;
    if (key == "N_cycles") {
      p.n_cycles = parse_int(line, value);
      if (p.n_cycles < 0) line.fail("must not be negative");
    } else if (key == "size") {
      p.size = parse_triple(line, value);
      for (int n : p.size)
        if (n < 2) line.fail("needs at least 2 sites per axis, got '" + value + "'");
    } else if (key == "grid") {
      p.grid = parse_triple(line, value);
    } else if (key == "periodicity") {
      p.periodic = parse_flags(line, value);
      periodic_given = true;
    } else if (key == "boundary_walls") {
      p.walls = parse_flags(line, value);
    } else if (key == "boundary_speed_bottom" || key == "boundary_speed_top") {
      if (parse_double(line, value) != 0.0) line.fail("must be 0: moving walls are not implemented");
    } else if (key == "viscosity") {
      p.viscosity = parse_double(line, value);
      if (p.viscosity <= 0) line.fail("must be positive");
    } else if (key == "viscosity_bulk") {
      p.viscosity_bulk = parse_double(line, value);
      if (p.viscosity_bulk <= 0) line.fail("must be positive");
    } else if (key == "ghost_modes") {
      p.ghost_modes = parse_switch(line, value);
    } else if (key == "free_energy") {
      expect(line, value, "symmetric_lb", "this solver is the symmetric binary fluid with a lattice Boltzmann g");
    } else if (key == "A") {
      p.a = parse_double(line, value);
    } else if (key == "B") {
      p.b = parse_double(line, value);
    } else if (key == "K") {
      p.kappa = parse_double(line, value);
    } else if (key == "phi0") {
      p.phi0 = parse_double(line, value);
    } else if (key == "noise") {
      p.noise = parse_double(line, value);
    } else if (key == "phi_initialisation") {
      expect(line, value, "spinodal", "only the spinodal initial condition is implemented");
    } else if (key == "mobility") {
      p.mobility = parse_double(line, value);
      if (p.mobility < 0) line.fail("must not be negative");
    } else if (key == "fd_gradient_calculation") {
      if (value == "3d_27pt_fluid")
        p.gradient = Gradient::fluid_27pt;
      else if (value == "3d_27pt_solid")
        p.gradient = Gradient::solid_27pt;
      else
        line.fail("'" + value + "' is not one of 3d_27pt_fluid, 3d_27pt_solid");
    } else if (key == "colloid_init") {
      expect(line, value, "no_colloids", "colloids are not implemented");
    } else if (key == "freq_statistics") {
      p.freq_statistics = parse_int(line, value);
      if (p.freq_statistics <= 0) line.fail("must be positive");
    } else if (key == "config_at_end") {
      parse_switch(line, value);  // no configuration files are written
    } else if (key == "random_seed") {
      const int seed = parse_int(line, value);
      if (seed <= 0) line.fail("must be a positive integer");
      p.random_seed = static_cast<std::uint32_t>(seed);
    } else {
      line.fail("is not a known key (known: N_cycles, size, grid, periodicity, boundary_walls, "
                "boundary_speed_bottom, boundary_speed_top, viscosity, viscosity_bulk, ghost_modes, free_energy, "
                "A, B, K, phi0, noise, phi_initialisation, mobility, fd_gradient_calculation, colloid_init, "
                "freq_statistics, config_at_end, random_seed)");
    }
  }
  // Ludwig's rule: an axis with walls is not periodic.
  for (int d = 0; d < 3; ++d) {
    if (p.walls[d] && !periodic_given) p.periodic[d] = 0;
    if (p.walls[d] && p.periodic[d])
      throw tessera::Error(name + ": axis " + "xyz"[d] + " has walls and is periodic; set its periodicity to 0");
    if (!p.walls[d] && !p.periodic[d])
      throw tessera::Error(name + ": axis " + "xyz"[d] +
                           " is neither periodic nor walled; open boundaries are not implemented");
  }
  if (p.b <= 0) throw tessera::Error(name + ": B must be positive for the symmetric free energy, got " + std::to_string(p.b));
  if (p.kappa < 0) throw tessera::Error(name + ": K must not be negative, got " + std::to_string(p.kappa));
  return p;
}

Parameters read_input(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw tessera::Error("cannot open input file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_input(text.str(), path);
}

}  // namespace lb
