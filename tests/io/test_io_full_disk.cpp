// Outputs are whole or absent. A write that fails like a full disk (the process's file-size limit,
// RLIMIT_FSIZE, makes writes past it fail with EFBIG) is an error that says so, and leaves
// nothing under the file's name: no 0-byte PNG, no truncated trace or checkpoint, no .partial.

#include <tessera/core/error.hpp>
#include <tessera/core/trace.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/io/png.hpp>

#include <gtest/gtest.h>

#include "../support/error_of.hpp"
#include "io_test_support.hpp"

#include <sys/resource.h>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Files may grow to `bytes` while this lives, as if the disk had that much room.
class DiskRoom {
 public:
  explicit DiskRoom(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails instead of killing us
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~DiskRoom() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  void (*previous_)(int) = nullptr;
};

using tessera::test::error_of;

TEST(FullDisk, APngThatCannotBeWrittenLeavesNoFile) {
  if (!tessera::io::png_supported()) GTEST_SKIP() << "this build has no libpng";
  const std::size_t n = 256;
  std::vector<double> field(n * n);
  for (std::size_t i = 0; i < field.size(); ++i) field[i] = std::sin(0.37 * static_cast<double>(i * i % 9973));
  const io_test::ScratchDir dir;
  const std::string path = dir.file("field.png");
  {
    DiskRoom room(4096);
    const std::string m = error_of([&] { tessera::io::write_png(path, field, n, n); });
    EXPECT_NE(m.find("disk full"), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(path)) << "a failed PNG write left a file under its name";
  EXPECT_FALSE(fs::exists(path + ".partial"));
  tessera::io::write_png(path, field, n, n);  // with room, it is written whole
  EXPECT_GT(fs::file_size(path), 4096u);
}

TEST(FullDisk, ATraceThatCannotBeWrittenLeavesNoFile) {
  tessera::Trace trace;
  const auto track = trace.add_track("worker 0");
  for (std::uint64_t i = 0; i < 2000; ++i)
    trace.events.push_back({"node " + std::to_string(i), "cpu", track, i, i + 1});
  const io_test::ScratchDir dir;
  const std::string path = dir.file("steps.trace.json");
  {
    DiskRoom room(4096);
    const std::string m = error_of([&] { trace.save(path); });
    EXPECT_NE(m.find("Trace::save"), std::string::npos) << m;
    EXPECT_NE(m.find("disk full"), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(path)) << "a failed trace write left a truncated file under its name";
  EXPECT_FALSE(fs::exists(path + ".partial"));
  trace.save(path);
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(all.find("node 1999"), std::string::npos);
}

}  // namespace
