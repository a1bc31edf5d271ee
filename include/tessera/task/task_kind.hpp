#pragma once
// Which kind of device a task wants; the scheduler picks the device of that kind.

#include <cstdint>
#include <string_view>

namespace tessera {

/// cpu: the host's cores (the executor's workers). gpu: an accelerator (a CUDA GPU, or a sim
/// device standing in for one), chosen by the TaskRuntime's Scheduler.
///
///   auto t = tessera::native_task("fill", tessera::TaskKind::gpu, fill, tessera::write(x));
enum class TaskKind : std::uint8_t { cpu, gpu };

constexpr std::string_view to_string(TaskKind k) noexcept { return k == TaskKind::cpu ? "cpu" : "gpu"; }

}  // namespace tessera
