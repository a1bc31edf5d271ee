// After the last communicator has finalised MPI, tessera refuses to start again with a
// tessera::Error (MPI cannot be initialised twice in one process) instead of crashing in MPI.
#include <tessera/core/error.hpp>
#include <tessera/dist/communicator.hpp>

#include <cstdio>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  int rank = -1;
  {
    tessera::dist::Communicator first(&argc, &argv);
    rank = first.rank();
    first.barrier();
  }  // the last communicator: MPI is finalised here
  try {
    tessera::dist::Communicator again(&argc, &argv);
  } catch (const tessera::Error& e) {
    if (std::string(e.what()).find("already finalised") != std::string::npos) {
      std::printf("rank %d: refused: %s\n", rank, e.what());
      return 0;
    }
    std::printf("rank %d: wrong message: %s\n", rank, e.what());
    return 1;
  }
  std::printf("rank %d: a communicator after MPI_Finalize was accepted\n", rank);
  return 1;
}
