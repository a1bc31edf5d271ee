#pragma once
// The dist suite's euler2d group (built when the apps are): see euler2d_ranks.cpp.
#include "common/report.hpp"

#include <tessera/dist/communicator.hpp>

/// Collective over `comm`'s two ranks; rank 0 adds the records. False when the two ranks' state
/// differs from one process's.
bool bench_euler2d_ranks(tessera::dist::Communicator& comm, tessera::bench::Report& report, bool quick);
