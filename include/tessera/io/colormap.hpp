#pragma once
// A perceptual colormap for scalar fields: dark violet through blue, teal and green to yellow,
// with luminance rising monotonically, so a greyscale print or a colour-blind reader still sees
// the order of values (the property that makes viridis the usual choice).
//
//   tessera::io::Rgb c = tessera::io::colormap(0.25);   // a quarter of the way up
//   double t = tessera::io::normalise(v, {lo, hi});       // v's place in [lo, hi], clamped

#include <cstdint>

namespace tessera::io {

/// An 8-bit sRGB colour.
struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

/// The values mapped to the two ends of the colormap; values outside are clamped.
struct ColorRange {
  double lo = 0.0;
  double hi = 1.0;
};

/// The colour at t in [0, 1] (clamped; NaN gives the colour of 0). colormap(0) and colormap(1)
/// are the two ends of the table exactly.
Rgb colormap(double t) noexcept;

/// v's position in `range` as a fraction in [0, 1]: clamped outside it, 0.5 when lo == hi,
/// 0 for NaN.
double normalise(double v, ColorRange range) noexcept;

}  // namespace tessera::io
