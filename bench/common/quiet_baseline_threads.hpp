#pragma once
// Baseline libraries and tessera timed in the same rounds share the cores, and the baselines'
// thread pools spin after each call: libgomp for milliseconds when OMP_WAIT_POLICY is unset. The
// tessera call timed next then runs with a core taken: on the 2-core VM that made tessera's
// particle update read 0.81 of the AoS loop it equals when timed alone. The kernels suite reruns
// itself with libgomp told to sleep at once; each baseline loop then pays a thread wake-up
// (microseconds, against loops of milliseconds). libgomp reads the variable when it loads,
// before main, hence the re-exec. (OpenBLAS's equivalent, OPENBLAS_THREAD_TIMEOUT, also puts its
// threads to sleep inside a call and slowed its DGEMM 2-3x; the tasks suite pauses instead.)

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace tessera::bench {

/// Re-executes this program with each (variable, value) set, unless every one of them is set
/// already (the caller's choices stand). Returns only if it does not re-execute.
inline void rerun_with_environment(char** argv, std::initializer_list<std::pair<const char*, const char*>> settings) {
#if defined(__linux__)
  bool changed = false;
  for (const auto& [name, value] : settings)
    if (std::getenv(name) == nullptr && ::setenv(name, value, 1) == 0) changed = true;
  if (!changed) return;
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "note: could not rerun with the baselines' thread pools told to sleep; their spinning threads may "
                       "share the cores with tessera's rounds\n");
#else
  (void)argv;
  (void)settings;
#endif
}

/// libgomp's threads sleep as soon as a parallel loop ends.
inline constexpr std::pair<const char*, const char*> passive_openmp{"OMP_WAIT_POLICY", "passive"};
}  // namespace tessera::bench
