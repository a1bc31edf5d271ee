#pragma once
// The particle of the update benchmark (the Particle example of record.hpp) and its dyadic
// initial values: with dt = 0.5 every update is exact, so all variants must agree bit for bit.

#include <tessera/layout/record.hpp>

#include <cstddef>

namespace tessera::bench {

template <typename T, typename S = Owned>
struct Particle : tessera::Record<S, Vector<T, 3>, Vector<T, 3>> {
  TESSERA_RECORD(Particle)
  TESSERA_FIELD(position, 0)
  TESSERA_FIELD(velocity, 1)
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE void update(T dt) { position() += velocity() * dt; }
};

template <typename T>
Particle<T> initial_particle(std::size_t k) {
  const T f = static_cast<T>(k % 1000);
  return Particle<T>({f, -f, T(0.25) * f}, {T(1) + f, T(2), T(-0.5) * f});
}

}  // namespace tessera::bench
