#pragma once
// Shared by the Buffer tests: rows of a few words whose contents encode one number, so a stale
// or torn row shows as a mismatch wherever it is read.

#include <tessera/memory/row_ranges.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace buffer_test {

constexpr std::size_t words_per_row = 3;
constexpr std::size_t row_bytes = words_per_row * sizeof(std::uint32_t);

inline std::uint32_t word(std::uint32_t value, std::size_t w) {
  return value * 2654435761u + static_cast<std::uint32_t>(w) * 40503u;
}

inline void put(void* base, std::size_t row, std::uint32_t value) {
  auto* p = static_cast<std::uint32_t*>(base) + row * words_per_row;
  for (std::size_t w = 0; w < words_per_row; ++w) p[w] = word(value, w);
}

inline bool holds(const void* base, std::size_t row, std::uint32_t value) {
  const auto* p = static_cast<const std::uint32_t*>(base) + row * words_per_row;
  for (std::size_t w = 0; w < words_per_row; ++w)
    if (p[w] != word(value, w)) return false;
  return true;
}

/// A non-empty range of [0, n), often short, sometimes everything.
inline tessera::RowRange random_rows(std::mt19937& rng, std::size_t n) {
  if (rng() % 8 == 0) return {0, n};
  std::size_t a = rng() % n, b = rng() % n;
  if (a > b) std::swap(a, b);
  return {a, b + 1};
}

/// The rows where `flags` is set, as a RowRanges.
inline tessera::RowRanges ranges_of(const std::vector<bool>& flags) {
  tessera::RowRanges out;
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) out.add({i, i + 1});
  return out;
}

}  // namespace buffer_test
