// Every bad input of Buffer and MemoryManager raises tessera::Error naming the buffer, the call
// and the values, and leaves the buffer usable.
#include "buffer_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace tessera;
using namespace buffer_test;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' in: " << text;
}

class BufferErrors : public ::testing::Test {
 protected:
  DeviceSet devices = DeviceSet::select("sim:2:16MiB");
  MemoryManager memory{devices};
  Buffer b{memory, 10, row_bytes, "u"};
  Stream& s0 = devices.accelerator(0).compute_stream(0);
  Stream& s1 = devices.accelerator(1).compute_stream(0);

  void write_all_on_host() {
    void* h = b.request(Access::write).get();
    for (std::size_t i = 0; i < 10; ++i) put(h, i, 1);
    b.release();
  }
};

}  // namespace

TEST_F(BufferErrors, SizesMustHoldSomething) {
  expect_contains(message_of([&] { Buffer x(memory, 0, 8, "empty"); }), {"Buffer 'empty'", "0 rows of 8 bytes"});
  expect_contains(message_of([&] { Buffer x(memory, 8, 0, "flat"); }), {"Buffer 'flat'", "8 rows of 0 bytes"});
  expect_contains(message_of([&] { Buffer x(memory, std::numeric_limits<std::size_t>::max() / 2, 4, "huge"); }),
                  {"Buffer 'huge'", "overflow"});
}

TEST_F(BufferErrors, RowsOutOfRange) {
  write_all_on_host();
  expect_contains(message_of([&] {
                    b.prepare(1, s0, Access::read, {5, 11});
                  }),
                  {"Buffer 'u'", "prepare(read, rows [5,11))", "sim:0", "past the last row", "[0,10)"});
  expect_contains(message_of([&] { b.prepare(1, s0, Access::write, {7, 3}); }), {"[7,3)", "ends before it begins"});
  expect_contains(message_of([&] { b.prepare(1, s0, Access::write, {4, 4}); }), {"[4,4)", "empty"});
  expect_contains(message_of([&] {
                    (void)b.request(Access::read, {0, 12});
                  }),
                  {"Buffer 'u'", "request(read, rows [0,12))", "past the last row"});
  EXPECT_FALSE(b.has_replica(1)) << "a rejected access allocates nothing";
}

TEST_F(BufferErrors, SpaceOutOfRange) {
  expect_contains(message_of([&] { b.prepare(3, s0, Access::write); }),
                  {"Buffer 'u'", "space 3", "spaces 0 (host) to 2 (sim:1)"});
  expect_contains(message_of([&] { (void)b.valid_rows(7); }), {"Buffer 'u'", "space 7"});
  expect_contains(message_of([&] { (void)memory.device(3); }), {"memory space 3"});
  expect_contains(message_of([&] { (void)memory.bytes_in_use(3); }), {"memory space 3"});
}

TEST_F(BufferErrors, AStreamOfAnotherDevice) {
  expect_contains(message_of([&] { b.prepare(1, s1, Access::write); }),
                  {"Buffer 'u'", "stream sim:1/compute0 of sim:1", "space 1 is sim:0", "space 2 for sim:1"});
  auto others = DeviceSet::select("sim:1:16MiB");
  expect_contains(message_of([&] { b.prepare(1, others.accelerator(0).compute_stream(0), Access::write); }),
                  {"not a device of this memory manager"});
  expect_contains(message_of([&] { (void)memory.space_of(others.accelerator(0)); }),
                  {"sim:0", "not one of this memory manager's devices"});
  EXPECT_EQ(memory.space_of(devices.accelerator(1)), 2u);
  EXPECT_EQ(memory.space_of(devices.host()), 0u);
}

TEST_F(BufferErrors, ReleaseWithoutRequestAndAConflictingHold) {
  expect_contains(message_of([&] { b.release(); }), {"Buffer 'u'", "release() without a host hold"});
  (void)b.request(Access::write, {0, 2}).get();
  expect_contains(message_of([&] {
                    (void)b.request(Access::read, {1, 6});
                  }),
                  {"Buffer 'u'", "conflicts with the host's request(write, rows [0,2))", "release()"});
  (void)b.request(Access::write, {5, 6}).get();  // other rows: the host may write both at once
  expect_contains(message_of([&] { b.release(); }),
                  {"Buffer 'u'", "several requests", "write rows [0,2)", "release(mode, rows)"});
  expect_contains(message_of([&] { b.release(Access::read, {0, 2}); }),
                  {"Buffer 'u'", "release(read, rows [0,2)) matches no host hold", "2 held"});
  b.release(Access::write, {0, 2});
  b.release();
  EXPECT_THROW(b.release(), Error) << "one release per request";
}

// Host readers share rows (two graph nodes that read one tensor in one level); a writer waits
// for them to be released, and a device writer is refused while they hold.
TEST_F(BufferErrors, HostReadersShareRowsAWriterDoesNot) {
  void* h = b.request(Access::write).get();
  for (std::size_t i = 0; i < 10; ++i) put(h, i, static_cast<int>(i));
  b.release();
  auto* r1 = b.request(Access::read, {0, 6}).get();
  auto* r2 = b.request(Access::read, {4, 10}).get();
  EXPECT_EQ(r1, r2);
  expect_contains(message_of([&] { (void)b.request(Access::read_write, {5, 6}); }),
                  {"conflicts with the host's request(read, rows"});
  expect_contains(message_of([&] { b.prepare(1, s0, Access::write, {0, 1}); }),
                  {"conflicts with the host's request(read, rows [0,6))"});
  void* d = b.prepare(1, s0, Access::read, {2, 8});  // a device reader joins them
  b.finish(1, s0, Access::read, {2, 8});
  (void)d;
  b.release(Access::read, {4, 10});
  b.release(Access::read, {0, 6});
  EXPECT_NO_THROW((void)b.request(Access::read_write, {5, 6}).get());
  b.release();
}

TEST_F(BufferErrors, ReadingRowsNeverWritten) {
  void* h = b.request(Access::write, {0, 4}).get();
  for (std::size_t i = 0; i < 4; ++i) put(h, i, 1);
  b.release();
  expect_contains(message_of([&] {
                    b.prepare(1, s0, Access::read_write, {2, 6});
                  }),
                  {"Buffer 'u'", "prepare(read_write, rows [2,6))", "rows {[4,6)}", "never written", "Access::write"});
  expect_contains(message_of([&] { (void)b.request(Access::reduce); }), {"rows {[4,10)}", "never written"});
  // Writing them is fine, and afterwards so is reading.
  void* d = b.prepare(1, s0, Access::write, {4, 10});
  s0.enqueue_host([d] {
    for (std::size_t i = 4; i < 10; ++i) put(d, i, 2);
  });
  b.finish(1, s0, Access::write, {4, 10});
  const void* all = b.request(Access::read).get();
  EXPECT_TRUE(holds(all, 3, 1));
  EXPECT_TRUE(holds(all, 9, 2));
  b.release();
}

TEST_F(BufferErrors, ConflictingAccessesInFlight) {
  write_all_on_host();
  b.prepare(1, s0, Access::write, {0, 5});
  expect_contains(message_of([&] {
                    b.prepare(2, s1, Access::read, {4, 8});
                  }),
                  {"Buffer 'u'", "prepare(read, rows [4,8)) on sim:1",
                   "conflicts with prepare(write, rows [0,5)) on sim:0", "has not been finished"});
  expect_contains(message_of([&] { (void)b.request(Access::read, {0, 1}); }), {"conflicts with prepare(write"});
  // Disjoint rows, or reads of the same rows, may be in flight together.
  b.prepare(2, s1, Access::read, {5, 10});
  b.prepare(1, s0, Access::read, {6, 8});
  b.finish(2, s1, Access::read, {5, 10});
  b.finish(1, s0, Access::read, {6, 8});
  b.finish(1, s0, Access::write, {0, 5});
  b.prepare(2, s1, Access::read, {4, 8});
  b.finish(2, s1, Access::read, {4, 8});

  (void)b.request(Access::write, {2, 3}).get();
  expect_contains(message_of([&] {
                    b.prepare(1, s0, Access::reduce, {0, 10});
                  }),
                  {"conflicts with the host's request(write, rows [2,3))", "release()"});
  b.release();
}

TEST_F(BufferErrors, FinishWithoutPrepare) {
  write_all_on_host();
  expect_contains(message_of([&] { b.finish(1, s0, Access::read); }),
                  {"Buffer 'u'", "finish(read, rows [0,10)) on sim:0", "matches no access in flight", "none is"});
  b.prepare(1, s0, Access::read, {0, 3});
  expect_contains(message_of([&] {
                    b.finish(1, s0, Access::read_write, {0, 3});
                  }),
                  {"in flight: prepare(read, rows [0,3)) on sim:0 (stream sim:0/compute0)"});
  b.finish(1, s0, Access::read, {0, 3});
}

TEST_F(BufferErrors, AMovedFromHandle) {
  Buffer moved = std::move(b);
  expect_contains(message_of([&] { (void)b.rows(); }), {"moved from"});  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.rows(), 10u);
}
