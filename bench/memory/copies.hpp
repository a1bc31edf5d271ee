#pragma once
#include "common/report.hpp"

namespace tessera::bench {
/// Host↔sim and sim↔sim copy bandwidth against memcpy (a GPU adds host↔device with the CUDA backend).
void run_copy_benchmarks(Report& report, bool quick);
}  // namespace tessera::bench
