#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

/// How an idle worker picks the queues it steals from (Ripple §6.2, Algorithm 4).
enum class StealStrategy : std::uint8_t {
  round_robin,  ///< victims in order from the next worker on, wrapping around (the default)
  random,       ///< uniformly random victims
  topological,  ///< nearest first by shared cache (hwloc); workers are pinned to cores
};

constexpr std::string_view to_string(StealStrategy s) noexcept {
  switch (s) {
    case StealStrategy::round_robin: return "round_robin";
    case StealStrategy::random: return "random";
    case StealStrategy::topological: return "topological";
  }
  return "?";
}

}  // namespace tessera
