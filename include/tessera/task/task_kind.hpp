#pragma once
// Which kind of device a task wants; the scheduler picks the device of that kind. It is the
// executor's ExecKind: one kind enum under every front end.

#include <tessera/sched/exec_kind.hpp>

namespace tessera {

/// cpu: the host's cores (the executor's workers). gpu: an accelerator (a CUDA GPU, or a sim
/// device standing in for one), chosen by the TaskRuntime's Scheduler.
///
///   auto t = tessera::native_task("fill", tessera::TaskKind::gpu, fill, tessera::write(x));
using TaskKind = ExecKind;

}  // namespace tessera
