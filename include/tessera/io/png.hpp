#pragma once
// PNG snapshots of 2-D scalar fields through a perceptual colormap (colormap.hpp), for watching
// a simulation run. The field is a dense host array, x fastest; the image has y up (row 0 of the
// image is the largest y), as a plot of the domain would.
//
//   std::vector<double> rho(nx * ny);                       // rho[x + nx * y]
//   tessera::io::write_png("rho.png", rho, nx, ny);         // range from the field's min and max
//   tessera::io::write_png("rho.png", rho, nx, ny, {.range = tessera::io::ColorRange{0.0, 2.0}});
//
//   // Straight from a tensor: gathered to the host, one member selected per site.
//   tessera::io::write_png("rho.png", state, [](const State<double, 2>& s) { return s.density(); });
//
// Needs libpng when tessera was built (TESSERA_HAVE_PNG); without it every write throws
// tessera::Error saying so, and png_supported() is false.

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/io/colormap.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera::io {

struct PngOptions {
  /// Values mapped to the two ends of the colormap; when empty, the finite min and max of the field.
  std::optional<ColorRange> range = std::nullopt;
  /// Each cell becomes scale x scale pixels (small grids are otherwise a few pixels wide).
  std::size_t scale = 1;
};

/// Whether this tessera was built with libpng.
bool png_supported() noexcept;

/// Writes the nx x ny field (field[x + nx * y]) as an 8-bit RGB PNG; returns the range used.
/// Throws tessera::Error when field.size() != nx * ny, a size or the scale is 0, the range is
/// not finite or has hi < lo, the file cannot be written, or tessera was built without libpng.
/// NaN cells take the colour of the low end.
///
///   auto used = tessera::io::write_png("t.png", temperature, 256, 128);
ColorRange write_png(const std::string& path, std::span<const double> field, std::size_t nx, std::size_t ny,
                     const PngOptions& options = {});
ColorRange write_png(const std::string& path, std::span<const float> field, std::size_t nx, std::size_t ny,
                     const PngOptions& options = {});

/// Writes select(site) for every site of a 2-D tensor (gathered to the host with gather_to).
/// `select` takes an owned T (a Record, or the number itself) and returns something convertible
/// to double. For a tensor spread over ranks the call is collective: rank 0 writes the picture,
/// and every rank gets its range, or the error that stopped rank 0.
///
///   write_png("rho.png", state, [](const State<double, 2>& s) { return s.density(); });
template <typename T, Layout L, typename Select>
  requires std::is_invocable_v<Select&, const T&>
ColorRange write_png(const std::string& path, const Tensor<T, 2, L>& tensor, Select select,
                     const PngOptions& options = {}) {
  const Extent<2> n = tensor.size();
  std::vector<T> dense(n.volume());
  tensor.gather_to(dense.data());
  std::vector<double> field(dense.size());
  for (std::size_t k = 0; k < dense.size(); ++k) field[k] = static_cast<double>(select(std::as_const(dense[k])));
  Ranks* ranks = tensor.ranks();
  if (ranks == nullptr || ranks->size() == 1) return write_png(path, std::span<const double>(field), n[0], n[1], options);
  // One writer, and every rank learns the outcome before any goes on (and reads the file, say).
  double outcome[3] = {0, 0, 0};  // written?, range
  std::exception_ptr failure;
  if (ranks->rank() == 0) {
    try {
      const ColorRange r = write_png(path, std::span<const double>(field), n[0], n[1], options);
      outcome[0] = 1, outcome[1] = r.lo, outcome[2] = r.hi;
    } catch (...) {
      failure = std::current_exception();
    }
  }
  std::vector<double> all(3 * static_cast<std::size_t>(ranks->size()));
  all_gather(*ranks, tensor.collective_channel(), outcome, sizeof outcome, all.data());
  if (failure) std::rethrow_exception(failure);
  if (all[0] == 0)
    throw Error("PNG '" + path + "' of distributed tensor '" + tensor.name() +
                "': rank 0, which writes it, failed (its error says why)");
  return ColorRange{all[1], all[2]};
}

/// Writes a 2-D tensor of numbers.
///
///   write_png("u.png", u);
template <typename T, Layout L>
  requires std::is_arithmetic_v<T>
ColorRange write_png(const std::string& path, const Tensor<T, 2, L>& tensor, const PngOptions& options = {}) {
  return write_png(path, tensor, [](T v) { return v; }, options);
}

}  // namespace tessera::io
