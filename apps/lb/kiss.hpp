#pragma once
// Ludwig's per-site random numbers for the spinodal initial condition: Marsaglia's KISS99, one
// 4 x 32-bit state per lattice site, seeded from the run's seed and the site's global 1-based
// coordinates, so every site draws the same number whatever the decomposition. The
// description (and its check against both reference logs) is in apps/lb/README.md.

#include <cstdint>

namespace lb {

/// One step of KISS99 on `s`; returns the next 32-bit output.
inline std::uint32_t kiss99(std::uint32_t s[4]) {
  s[0] = 69069u * s[0] + 1234567u;
  std::uint32_t b = s[1] ^ (s[1] << 17);
  b ^= b >> 13;
  s[1] = b ^ (b << 5);
  s[2] = 36969u * (s[2] & 0xffffu) + (s[2] >> 16);
  s[3] = 18000u * (s[3] & 0xffffu) + (s[3] >> 16);
  b = (s[2] << 16) + s[3];
  return s[1] + (s[0] ^ b);
}

/// The uniform number in [0, 1] of the site at global 1-based (ig, jg, kg): the site's state is
/// four outputs of a generator seeded {seed + ig, 12953 + jg, 712357 + kg, 22383979}, and the
/// number is one further output scaled by 1/UINT32_MAX (a multiplication, as Ludwig does).
inline double site_uniform(std::uint32_t seed, int ig, int jg, int kg) {
  std::uint32_t seeding[4] = {seed + static_cast<std::uint32_t>(ig), 12953u + static_cast<std::uint32_t>(jg),
                              712357u + static_cast<std::uint32_t>(kg), 22383979u};
  std::uint32_t state[4];
  for (auto& s : state) s = kiss99(seeding);
  const std::uint32_t u = kiss99(state);
  return (1.0 / 4294967295.0) * static_cast<double>(u);
}

}  // namespace lb
