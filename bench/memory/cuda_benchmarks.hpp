#pragma once
#include "common/report.hpp"

namespace tessera::bench {
/// On a GPU (CUDA builds): host<->device copy bandwidth from pinned and pageable memory through a
/// tessera device against a plain cudaMemcpy loop, and the launch cost of an empty kernel through
/// a device node against a bare kernel-launch loop. Prints why and returns where there is no GPU.
void run_cuda_benchmarks(Report& report, bool quick);
}  // namespace tessera::bench
