#include "tessera/io/colormap.hpp"

#include <array>
#include <cmath>
#include <cstddef>

namespace tessera::io {
namespace {

// Control points chosen by hand along a viridis-like path (violet, blue, teal, green, yellow) and
// adjusted so Rec. 709 luminance rises by roughly 20-30 units per segment; interpolation between
// them is linear in sRGB, which keeps luminance monotone inside each segment too.
constexpr std::array<std::array<double, 3>, 9> kPoints{{
    {68, 2, 85},
    {72, 42, 122},
    {60, 80, 138},
    {45, 113, 142},
    {34, 144, 140},
    {40, 172, 128},
    {94, 199, 98},
    {172, 219, 52},
    {250, 230, 40},
}};

std::uint8_t channel(double v) noexcept { return static_cast<std::uint8_t>(std::lround(v)); }

}  // namespace

Rgb colormap(double t) noexcept {
  if (!(t > 0.0)) t = 0.0;  // also catches NaN
  if (t > 1.0) t = 1.0;
  constexpr std::size_t segments = kPoints.size() - 1;
  const double x = t * static_cast<double>(segments);
  const std::size_t i = x >= static_cast<double>(segments) ? segments - 1 : static_cast<std::size_t>(x);
  const double f = x - static_cast<double>(i);
  const auto& a = kPoints[i];
  const auto& b = kPoints[i + 1];
  return {channel(a[0] + f * (b[0] - a[0])), channel(a[1] + f * (b[1] - a[1])), channel(a[2] + f * (b[2] - a[2]))};
}

double normalise(double v, ColorRange range) noexcept {
  if (std::isnan(v)) return 0.0;
  if (!(range.hi > range.lo)) return 0.5;
  const double t = (v - range.lo) / (range.hi - range.lo);
  return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

}  // namespace tessera::io
