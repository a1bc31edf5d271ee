#pragma once
// Random: counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). Element i of the
// array made for request r is a pure function of (seed, r, i), so a flow gives the same numbers
// for a seed on any device and any number of workers, and requests may be served in any order
// or at once.
//
//   Random<T>   request (uint64_t: which block of numbers)  -> output (Vector<T>, `count` values)

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/operation.hpp"

namespace tessera::flow {

/// Philox4x32 with 10 rounds: four 32-bit words from a 128-bit counter and a 64-bit key.
struct Philox4x32 {
  std::uint32_t x[4];

  TESSERA_HOST_DEVICE static Philox4x32 generate(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                                                 std::uint32_t k0, std::uint32_t k1) {
    constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
    constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = static_cast<std::uint64_t>(m0) * c0;
      const std::uint64_t p1 = static_cast<std::uint64_t>(m1) * c2;
      const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
      const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
      const std::uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
      c0 = n0, c1 = n1, c2 = n2, c3 = n3;
      k0 += w0;
      k1 += w1;
    }
    return Philox4x32{{c0, c1, c2, c3}};
  }
};

enum class Distribution {
  uniform,  ///< in [0, 1), 53 random bits per double (24 per float)
  normal,   ///< standard normal, Box-Muller on two uniforms
};

/// The value at (seed, block, i): uniform from words 0-1, normal from words 0-3.
template <typename T>
TESSERA_HOST_DEVICE T philox_value(std::uint64_t seed, std::uint64_t block, std::uint64_t i, Distribution d) {
  const Philox4x32 r = Philox4x32::generate(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i >> 32),
                                            static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                                            static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const double u1 = static_cast<double>((static_cast<std::uint64_t>(r.x[0]) << 21) ^ (r.x[1] >> 11)) * 0x1p-53;
  if (d == Distribution::uniform) return static_cast<T>(u1);
  const double u2 = static_cast<double>((static_cast<std::uint64_t>(r.x[2]) << 21) ^ (r.x[3] >> 11)) * 0x1p-53;
  const double radius = ::sqrt(-2.0 * ::log(1.0 - u1));  // 1 - u1 in (0, 1]
  return static_cast<T>(radius * ::cos(6.283185307179586 * u2));
}

template <typename T = double, typename Variant = tessera::detail::build_variant>
class Random : public Operation {
 public:
  InputPort<std::uint64_t, Random> request{*this, "request"};
  OutputPort<Vector<T>, Random> output{*this, "output"};

  Random(std::string name, std::size_t count, std::uint64_t seed, Distribution d = Distribution::uniform)
      : Operation(std::move(name)), count_(count), seed_(seed), distribution_(d) {}
  void fire(Context& c) override {
    const std::uint64_t block = c.get(request);
    auto v = c.allocate<T>(std::array<std::size_t, 1>{count_});
    T* const pv = v.data;
    const auto seed = seed_;
    const auto d = distribution_;
    auto body = [pv, block, seed, d] TESSERA_HOST_DEVICE(std::size_t i) { pv[i] = philox_value<T>(seed, block, i, d); };
    c.launch<decltype(body), Variant>(name(), count_, body);
    c.emit(output, std::move(v.array));
  }

 private:
  std::size_t count_;
  std::uint64_t seed_;
  Distribution distribution_;
};

}  // namespace tessera::flow
