// Buffer::host_if_sole: the host replica is offered to callers that order their own accesses
// exactly while it is the only valid copy of every row, and never once a device has the data or
// the host has requested it.
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <utility>

using namespace tessera;

namespace {

struct Fixture {
  DeviceSet devices = DeviceSet::select("sim:1:16MiB");
  MemoryManager memory{devices};
  Stream& host = devices.host().compute_stream(0);
  Stream& device = devices.accelerator(0).compute_stream(0);
  Buffer b{memory, 8, sizeof(double), "b"};

  void* host_write(RowRange rows) {
    void* p = b.prepare(0, host, Access::write, rows);
    std::memset(static_cast<char*>(p) + rows.begin * sizeof(double), 0, rows.size() * sizeof(double));
    b.finish(0, host, Access::write, rows);
    return p;
  }
  void device_access(Access mode) {
    b.prepare(1, device, mode);
    b.finish(1, device, mode);
    device.synchronize();
  }
};

}  // namespace

TEST(BufferHostSole, OnlyAfterAHostWriteOfEveryRow) {
  Fixture f;
  EXPECT_EQ(f.b.host_if_sole(), nullptr) << "a buffer never written has no valid copy";
  f.host_write({0, 4});
  EXPECT_EQ(f.b.host_if_sole(), nullptr) << "rows 4-8 were never written";
  void* base = f.host_write({0, 8});
  EXPECT_EQ(f.b.host_if_sole(), base);
  f.host_write({2, 3});  // more host writes keep it sole
  EXPECT_EQ(f.b.host_if_sole(), base);
}

TEST(BufferHostSole, ADeviceAccessEndsItUntilTheHostWritesEveryRowAgain) {
  for (Access mode : {Access::read, Access::write, Access::read_write}) {
    Fixture f;
    void* base = f.host_write({0, 8});
    f.device_access(mode);
    EXPECT_EQ(f.b.host_if_sole(), nullptr) << to_string(mode) << " on the device";
    f.host_write({0, 4});
    EXPECT_EQ(f.b.host_if_sole(), nullptr) << "the device may still hold rows 4-8";
    EXPECT_EQ(f.host_write({0, 8}), base);
    EXPECT_EQ(f.b.host_if_sole(), base);
  }
}

TEST(BufferHostSole, AHostRequestEndsItAndAWholeWriteHoldRestoresIt) {
  Fixture f;
  void* base = f.host_write({0, 8});
  void* p = f.b.request(Access::read).get();
  EXPECT_EQ(p, base);
  EXPECT_EQ(f.b.host_if_sole(), nullptr) << "the host holds it: another caller must not skip the holds";
  f.b.release(Access::read, f.b.all());
  EXPECT_EQ(f.b.host_if_sole(), nullptr) << "a read hold writes nothing";
  f.b.request(Access::write).get();
  f.b.release(Access::write, f.b.all());
  EXPECT_EQ(f.b.host_if_sole(), base);
  f.b.request(Access::write, {0, 2}).get();
  f.b.request(Access::read, {4, 6}).get();
  f.b.release(Access::write, {0, 2});
  EXPECT_EQ(f.b.host_if_sole(), nullptr) << "a partial write, with another hold still open";
  f.b.release(Access::read, {4, 6});
}

TEST(BufferHostSole, AMovedFromHandleHasNone) {
  Fixture f;
  f.host_write({0, 8});
  Buffer moved = std::move(f.b);
  EXPECT_NE(moved.host_if_sole(), nullptr);
  EXPECT_EQ(f.b.host_if_sole(), nullptr);  // NOLINT(bugprone-use-after-move): the documented answer
}
