#pragma once
// Ludwig-style input files for the binary-fluid runs: `key value` lines, `#` comments, vectors
// as `64_64_64`. Every key is checked: an unknown key, a malformed value or a combination the
// solver does not support is a tessera::Error naming the file, the line and the key.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lb {

enum class Gradient { fluid_27pt, solid_27pt };

struct Parameters {
  int n_cycles = 0;
  std::array<int, 3> size{64, 64, 64};
  std::array<int, 3> grid{1, 1, 1};  ///< Ludwig's MPI decomposition: read and reported, not used
  std::array<int, 3> periodic{1, 1, 1};
  std::array<int, 3> walls{0, 0, 0};
  double viscosity = 1.0 / 6.0;
  double viscosity_bulk = -1;  ///< < 0: the shear viscosity
  bool ghost_modes = true;
  double a = -0.003125, b = 0.003125, kappa = 0.002;
  double phi0 = 0.0;
  double noise = 0.1;  ///< amplitude of the spinodal noise
  double mobility = 0.0;
  Gradient gradient = Gradient::fluid_27pt;
  int freq_statistics = 100;
  std::uint32_t random_seed = 13;
  int parameters_read = 0;  ///< how many keys the file set

  double bulk_viscosity() const { return viscosity_bulk < 0 ? viscosity : viscosity_bulk; }
  bool any_walls() const { return walls[0] || walls[1] || walls[2]; }
};

/// Parses the text of an input file; `name` is used in messages.
Parameters parse_input(std::string_view text, const std::string& name = "input");
/// Reads and parses a file; a file that cannot be read is a tessera::Error naming it.
Parameters read_input(const std::string& path);

}  // namespace lb
