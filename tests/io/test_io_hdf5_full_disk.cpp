// An HDF5 series on a disk that fills up (RLIMIT_FSIZE: writes past it fail with EFBIG) reports
// the failure as a tessera::Error, and the program then exits cleanly: HDF5 1.10's own at-exit
// close of the file whose close had failed used to crash it. Its own binary, so that HDF5 is
// first used in the death test's child.

#include <tessera/core/error.hpp>
#include <tessera/io/hdf5.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace {

void fill_the_disk_then_exit(const std::string& base) {
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{};
  getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = 20000;
  setrlimit(RLIMIT_FSIZE, &limit);
  const std::vector<double> cells(256 * 256, 1.5);
  bool reported = false;
  try {
    tessera::io::Hdf5Series series(base, tessera::io::UniformGrid{{256, 256}, {0.0, 0.0}, {1.0, 1.0}});
    for (int step = 0; step < 5; ++step) {
      series.begin_step(step, 0.1 * step);
      series.write("density", cells);
      series.end_step();
    }
    series.close();
  } catch (const tessera::Error& e) {
    reported = std::string(e.what()).find("disk full") != std::string::npos;
    std::fprintf(stderr, "reported: %s\n", e.what());
  }
  std::exit(reported ? 0 : 3);  // runs the at-exit handlers, where the crash was
}

TEST(Hdf5FullDisk, AFullDiskIsReportedAndTheProgramExitsCleanly) {
  if (!tessera::io::hdf5_supported()) GTEST_SKIP() << "this build has no HDF5";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto dir = std::filesystem::temp_directory_path() / "tessera-hdf5-full-disk";
  std::filesystem::create_directories(dir);
  EXPECT_EXIT(fill_the_disk_then_exit((dir / "series").string()), ::testing::ExitedWithCode(0), "disk full");
  // The name is fixed because the death test's child runs this body again and must write where
  // the parent then cleans up.
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
