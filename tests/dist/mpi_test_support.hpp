#pragma once
// Shared by the MPI test binaries (tests/dist/mpi_main.cpp owns the communicator).
#include <tessera/dist/communicator.hpp>

#include <string>

tessera::dist::Communicator& test_comm();

/// A file name in the temporary directory that every rank of this run shares and no other run
/// does (rank 0's process id in it): ctest runs rank counts side by side, and two checkouts'
/// suites may run at once. Collective.
std::string shared_temp_path(const std::string& stem, const std::string& extension);
