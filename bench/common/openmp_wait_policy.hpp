#pragma once
// OpenMP baselines and tessera timed in the same rounds share the cores. libgomp's threads spin
// for milliseconds after each parallel loop (OMP_WAIT_POLICY unset), so the tessera call timed
// next ran with a core taken: on the 2-core VM that alone made tessera's particle update read
// 0.81 of the AoS loop it equals when timed alone. Suites whose loops take milliseconds rerun
// themselves with OMP_WAIT_POLICY=passive (a thread wake-up per loop, well under 1% there).
// libgomp reads the variable when it loads, before main, hence the re-exec.

#include <cstdio>
#include <cstdlib>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace tessera::bench {

/// Re-executes this program with OMP_WAIT_POLICY=passive unless the variable is already set
/// (then the caller's choice stands). Returns only if it does not re-execute.
inline void rerun_with_passive_openmp(char** argv) {
#if defined(__linux__)
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "note: could not rerun with OMP_WAIT_POLICY=passive; OpenMP threads may spin during tessera's rounds\n");
#else
  (void)argv;
#endif
}

}  // namespace tessera::bench
