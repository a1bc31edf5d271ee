#pragma once
// The dist suite's Jacobi3D group (built when the apps are): see jacobi3d_ranks.cpp.
#include "common/report.hpp"

#include <tessera/dist/communicator.hpp>

/// Collective over `comm`'s two ranks; rank 0 adds the records. False when a variant ends with
/// another error or iteration count than the hand-written MPI version.
bool bench_jacobi3d_ranks(tessera::dist::Communicator& comm, tessera::bench::Report& report, bool quick);
