// The main of the MPI test binaries: every rank runs every test, on one Communicator shared by
// them (MPI is initialised once per process). Each rank prints its failures with its rank, and
// mpirun's exit code is non-zero when any rank fails.
#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

namespace {
tessera::dist::Communicator* g_comm = nullptr;

class RankPrefix : public ::testing::EmptyTestEventListener {
 public:
  explicit RankPrefix(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] failure in %s:%d\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number());
  }

 private:
  int rank_;
};
}  // namespace

tessera::dist::Communicator& test_comm() { return *g_comm; }

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto comm = std::make_unique<tessera::dist::Communicator>(&argc, &argv);
  g_comm = comm.get();
  ::testing::UnitTest::GetInstance()->listeners().Append(new RankPrefix(comm->rank()));
  const int rc = RUN_ALL_TESTS();
  g_comm = nullptr;
  comm.reset();
  return rc;
}
