// A message of more than 2^31-1 bytes (MPI's int count) between two ranks, there and back,
// every byte checked. Not in the runtime label: TSan's shadow of 6 GiB of buffers would not fit.
#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>

namespace {

constexpr std::size_t message_bytes = (std::size_t{1} << 31) + 4099;  // past INT_MAX, not a whole piece

std::uint8_t byte_at(std::size_t i, int salt) { return static_cast<std::uint8_t>((i * 131 + i / 4096 + salt) & 0xff); }

/// The first index whose byte differs from byte_at(i, salt), or `n`.
std::size_t first_wrong(const std::uint8_t* p, std::size_t n, int salt) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != byte_at(i, salt)) return i;
  return n;
}

}  // namespace

TEST(DistLargeMessage, MoreThanIntMaxBytesArriveWhole) {
  auto& comm = test_comm();
  if (comm.size() != 2) GTEST_SKIP() << "runs on 2 ranks";
  // Not value-initialised: writing 2 GiB of zeros first would double the test's time.
  std::unique_ptr<std::uint8_t[]> there(new std::uint8_t[message_bytes]);
  if (comm.rank() == 0) {
    for (std::size_t i = 0; i < message_bytes; ++i) there[i] = byte_at(i, 1);
    comm.send_bytes(there.get(), message_bytes, 1, 11).wait();
    std::unique_ptr<std::uint8_t[]> back(new std::uint8_t[message_bytes + 64]);
    auto rx = comm.recv_bytes(back.get(), message_bytes + 64, 1, 12);  // room to spare: a shorter message is fine
    rx.wait();
    EXPECT_EQ(rx.bytes(), message_bytes);
    EXPECT_EQ(first_wrong(back.get(), message_bytes, 2), message_bytes);
  } else {
    auto rx = comm.recv_bytes(there.get(), message_bytes, 0, 11);
    rx.wait();
    EXPECT_EQ(rx.bytes(), message_bytes);
    EXPECT_EQ(first_wrong(there.get(), message_bytes, 1), message_bytes);
    for (std::size_t i = 0; i < message_bytes; ++i) there[i] = byte_at(i, 2);
    comm.send_bytes(there.get(), message_bytes, 0, 12).wait();
  }
}
