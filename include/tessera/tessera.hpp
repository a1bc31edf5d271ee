#pragma once
// Everything a program using tessera needs, in one include: devices and their selection,
// memory (Buffers, the MemoryManager), the executor and its node graphs, layouts and tensors,
// kernels (for_each, reduce), Graph, dynamic tasks, the loops front end and I/O. The headers of
// each layer (`<tessera/graph.hpp>`, `<tessera/tensor/tensor.hpp>`, ...) stay available for
// files that want less. targetDP, for C as well as C++, is `<tessera/targetdp.h>`.
//
//   #include <tessera/tessera.hpp>
//
//   int main() {
//     tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES
//     tessera::MemoryManager memory(devices);
//     tessera::Executor executor;
//     tessera::Tensor<double, 2, tessera::Strided> u(memory, {256, 256});
//     tessera::for_each(executor, [](auto x) { *x = 1.0; }, u);
//   }

#include "tessera/core/core.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/trace.hpp"
#include "tessera/device/device_set.hpp"
#include "tessera/device/submit.hpp"
#include "tessera/device/topology.hpp"
#include "tessera/exec.hpp"
#include "tessera/graph.hpp"
#include "tessera/flow.hpp"
#include "tessera/io.hpp"
#include "tessera/layout.hpp"
#include "tessera/loops.hpp"
#include "tessera/memory/arena.hpp"
#include "tessera/memory/buffer.hpp"
#include "tessera/memory/bytes.hpp"
#include "tessera/memory/memory_manager.hpp"
#include "tessera/sched/executor.hpp"
#include "tessera/sched/job.hpp"
#include "tessera/sched/node_graph.hpp"
#include "tessera/task/runtime.hpp"
#include "tessera/task/task.hpp"
#include "tessera/tensor/boundary.hpp"
#include "tessera/tensor/halo.hpp"
#include "tessera/tensor/tensor.hpp"
