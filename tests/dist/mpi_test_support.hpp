#pragma once
// Shared by the MPI test binaries (tests/dist/mpi_main.cpp owns the communicator).
#include <tessera/dist/communicator.hpp>

tessera::dist::Communicator& test_comm();
