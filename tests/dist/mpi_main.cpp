// The main of the MPI test binaries: every rank runs every test, on one Communicator shared by
// them (MPI is initialised once per process). Each rank prints its failures with its rank, and
// mpirun's exit code is non-zero when any rank fails.
#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <unistd.h>

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

std::string shared_temp_path(const std::string& stem, const std::string& extension) {
  auto& comm = test_comm();
  const std::int64_t job = comm.all_reduce(comm.rank() == 0 ? static_cast<std::int64_t>(::getpid()) : 0,
                                           tessera::dist::Communicator::Reduce::max);
  const std::string name = stem + "_np" + std::to_string(comm.size()) + "_" + std::to_string(job) + extension;
  return (std::filesystem::temp_directory_path() / name).string();
}

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
