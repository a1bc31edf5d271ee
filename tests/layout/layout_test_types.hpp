#pragma once
// Record types the layout tests share: the docs' Particle, a mixed-type cell, and a record with a
// non-type template parameter (which needs with_storage).

#include <tessera/layout.hpp>

namespace layout_test {

// DOC layout-particle begin
  template <typename T, typename S = tessera::Owned>
  struct Particle : tessera::Record<S, tessera::Vector<T, 3>, tessera::Vector<T, 3>> {
    TESSERA_RECORD(Particle)
    TESSERA_FIELD(position, 0)
    TESSERA_FIELD(velocity, 1)
    TESSERA_HOST_DEVICE void update(T dt) { position() += velocity() * dt; }
  };
  // DOC layout-particle end

/// Members of four scalar types, so AoS padding and SoA alignment are both exercised.
template <typename S = tessera::Owned>
struct Cell : tessera::Record<S, bool, double, tessera::Vector<float, 2>, int> {
  TESSERA_RECORD(Cell)
  TESSERA_FIELD(active, 0)
  TESSERA_FIELD(pressure, 1)
  TESSERA_FIELD(flow, 2)
  TESSERA_FIELD(id, 3)
};

// DOC layout-state begin
  template <typename T, std::size_t D, typename S = tessera::Owned>
  struct State : tessera::Record<S, tessera::Vector<T, D + 2>> {
    TESSERA_RECORD(State)
    template <typename S2>
    using with_storage = State<T, D, S2>;  // D is not a type, so say how to swap the storage
    TESSERA_FIELD(density, 0, 0)
    TESSERA_FIELD(energy, 0, 1)
    TESSERA_HOST_DEVICE auto velocity(std::size_t d) -> T& { return this->template get<0>()[2 + d]; }
  };
  // DOC layout-state end

}  // namespace layout_test
