#pragma once
// Byte counts for people: "3.0 MiB" in messages, "256MiB" in device selections (sim:4:256MiB).

#include <cstddef>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

#include "tessera/core/error.hpp"

namespace tessera {

/// Formats a byte count with a binary unit and one decimal: "512 B", "1.0 KiB", "3.0 MiB".
///
///   std::cerr << "pool holds " << tessera::format_bytes(pool.capacity()) << '\n';
inline std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // Move up while the value would print as 1024.0 or more, so 1048575 B reads "1.0 MiB".
  while (value >= 1023.95 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

/// Parses "<whole number><unit>" where unit is B, K/KiB, M/MiB, G/GiB or T/TiB, all powers of
/// 1024 (no unit means bytes). Decimal units (KB, MB, GB), fractions and anything else raise
/// tessera::Error naming the text, so "256MB" never silently means 256 000 000 or 2^28.
///
///   std::size_t per_device = tessera::parse_bytes("256MiB");  // 268435456
inline std::size_t parse_bytes(std::string_view text) {
  auto fail = [&](const char* why) {
    return Error("cannot read '" + std::string(text) + "' as a byte count: " + why +
                 "; write a whole number with B, K/KiB, M/MiB, G/GiB or T/TiB (powers of 1024), e.g. '256MiB'");
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) throw fail("it does not start with a number");
  const std::string_view unit = text.substr(digits);

  struct Unit {
    std::string_view name;
    unsigned shift;
  };
  static constexpr Unit units[] = {{"", 0},     {"B", 0},  {"K", 10},   {"KiB", 10}, {"M", 20},
                                   {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40},   {"TiB", 40}};
  unsigned shift = 64;
  for (const Unit& u : units)
    if (u.name == unit) shift = u.shift;
  if (shift == 64) {
    if (unit == "KB" || unit == "MB" || unit == "GB" || unit == "TB" || unit == "kB")
      throw fail("decimal units are ambiguous");
    throw fail(unit.starts_with('.') ? "fractions are not accepted" : "the unit is not one tessera knows");
  }

  std::size_t number = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto digit = static_cast<std::size_t>(text[i] - '0');
    if (number > (std::numeric_limits<std::size_t>::max() - digit) / 10) throw fail("it does not fit in 64 bits");
    number = number * 10 + digit;
  }
  if (number > (std::numeric_limits<std::size_t>::max() >> shift)) throw fail("it does not fit in 64 bits");
  return number << shift;
}

}  // namespace tessera
