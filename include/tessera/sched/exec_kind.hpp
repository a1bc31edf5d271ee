#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

/// Where a node's work runs. CPU-kind nodes run on any worker; GPU-kind nodes run on workers
/// with GPU priority, which submit device work and complete through device events (Ripple §6.2).
enum class ExecKind : std::uint8_t { cpu, gpu };

constexpr std::string_view to_string(ExecKind k) noexcept { return k == ExecKind::cpu ? "cpu" : "gpu"; }

}  // namespace tessera
