// The host device's memory: large blocks freed are reused for the next allocation of the same
// size (a loop of same-sized objects writes into mapped pages, not fresh ones), and
// bytes_in_use counts only blocks in use. (That at most 16 blocks are kept cannot be seen from
// here: the system allocator may hand the same addresses back.)
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

using tessera::DeviceSet;

TEST(HostDeviceMemory, ReusesALargeBlockOfTheSameSize) {
  auto devices = DeviceSet::select("host");
  tessera::Device& host = devices.host();
  constexpr std::size_t bytes = std::size_t{1} << 20;
  void* a = host.allocate(bytes);
  std::memset(a, 1, bytes);
  const std::size_t in_use = host.bytes_in_use();
  host.deallocate(a, bytes);
  EXPECT_EQ(host.bytes_in_use(), in_use - bytes);
  void* other = host.allocate(bytes / 2);  // another size: not the kept block
  EXPECT_NE(other, a);
  void* b = host.allocate(bytes);
  EXPECT_EQ(b, a);
  EXPECT_EQ(host.bytes_in_use(), in_use + bytes / 2);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 256, 0u);
  host.deallocate(b, bytes);
  host.deallocate(other, bytes / 2);
}

TEST(HostDeviceMemory, KeptBlocksAreNotInUse) {
  auto devices = DeviceSet::select("host");
  tessera::Device& host = devices.host();
  const std::size_t before = host.bytes_in_use();
  constexpr std::size_t bytes = std::size_t{1} << 20, n = 40;  // more than are kept (16, 64 MiB)
  for (int round = 0; round < 2; ++round) {
    std::vector<void*> blocks(n);
    for (auto& p : blocks) {
      p = host.allocate(bytes);
      std::memset(p, round, bytes);
    }
    EXPECT_EQ(host.bytes_in_use(), before + n * bytes);
    for (void* p : blocks) host.deallocate(p, bytes);
    EXPECT_EQ(host.bytes_in_use(), before);
  }
}

// Blocks of 2 MiB and more are mapped on their own at a 2 MiB boundary (offered to transparent
// huge pages), except under AddressSanitizer, which checks only the allocators it wraps.
TEST(HostDeviceMemory, LargeBlocksStartOnALargePage) {
  auto devices = DeviceSet::select("host");
  tessera::Device& host = devices.host();
  constexpr std::size_t bytes = (std::size_t{3} << 20) + 5;
  const std::size_t before = host.bytes_in_use();
  auto* p = static_cast<unsigned char*>(host.allocate(bytes));
  std::memset(p, 7, bytes);
  EXPECT_EQ(p[0], 7);
  EXPECT_EQ(p[bytes - 1], 7);
  EXPECT_EQ(host.bytes_in_use(), before + bytes);
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (std::size_t{2} << 20), 0u);
#endif
  host.deallocate(p, bytes);
  EXPECT_EQ(host.bytes_in_use(), before);
  void* again = host.allocate(bytes);  // the kept block comes back
  EXPECT_EQ(again, p);
  host.deallocate(again, bytes);
}

TEST(HostDeviceMemory, BytesInUseFollowsSmallBlocks) {
  auto devices = DeviceSet::select("host");
  tessera::Device& host = devices.host();
  const std::size_t before = host.bytes_in_use();
  void* p = host.allocate(4096);
  EXPECT_EQ(host.bytes_in_use(), before + 4096);
  host.deallocate(p, 4096);
  EXPECT_EQ(host.bytes_in_use(), before);
}
