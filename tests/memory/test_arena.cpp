// Arena: bump allocation with alignment, reset, high water, and the messages of its errors.
#include <tessera/memory/arena.hpp>
#include <tessera/memory/pool_allocator.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using tessera::Arena;

namespace {

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// An address no process maps (the x86-64 ASan shadow gap, far above a normal heap): the arena
// must only do arithmetic on it, as it would on GPU memory.
void* const unmapped = reinterpret_cast<void*>(std::uintptr_t{1} << 40);

}  // namespace

// The arena example of docs/memory.md; keep the text between the DOC markers identical.
TEST(Arena, DocExample) {
  std::vector<std::byte> region(16 << 20);
  tessera::PoolAllocator pool(region.data(), region.size(), "sim:0");
  std::vector<std::uintptr_t> first_keys;
  // DOC memory-arena-example begin
  // Scratch for graph runs, carved once from a pool block (any range works, host or device).
  void* block = pool.allocate(1 << 20);
  tessera::Arena scratch(block, 1 << 20, "run-scratch");
  for (int run = 0; run < 3; ++run) {
    auto* keys = static_cast<std::uint32_t*>(scratch.allocate(1000 * sizeof(std::uint32_t)));
    auto* flags = static_cast<std::uint8_t*>(scratch.allocate(1000, 64));  // 64-byte aligned
    std::fill_n(flags, 1000, std::uint8_t{0});
    keys[0] = flags[0];
    first_keys.push_back(reinterpret_cast<std::uintptr_t>(keys));
    scratch.reset();  // everything this run allocated is freed at once
  }
  std::size_t needed = scratch.high_water();  // how big the range really had to be
  pool.deallocate(block, 1 << 20);
  // DOC memory-arena-example end
  EXPECT_EQ(needed, 4032u + 1000u) << "keys (4000 B, padded to a multiple of 64), then flags";
  EXPECT_EQ(first_keys, std::vector<std::uintptr_t>(3, addr(block))) << "every run starts over at the base";
}

TEST(Arena, BumpsInOrderWithEachAlignment) {
  std::vector<std::byte> region(4096);
  Arena arena(region.data(), region.size(), "host");
  std::uintptr_t end_of_last = addr(region.data());
  for (std::size_t alignment : {1u, 8u, 64u, 256u, 16u, 512u}) {
    void* p = arena.allocate(100, alignment);
    EXPECT_EQ(addr(p) % alignment, 0u) << "alignment " << alignment;
    EXPECT_GE(addr(p), end_of_last) << "allocations must not overlap";
    EXPECT_LT(addr(p) - end_of_last, alignment) << "padding is less than the alignment";
    std::memset(p, 0xab, 100);  // ASan: inside the region
    end_of_last = addr(p) + 100;
    EXPECT_EQ(arena.used(), end_of_last - addr(region.data()));
  }
  EXPECT_EQ(arena.capacity(), 4096u);
  EXPECT_EQ(arena.name(), "host");
}

TEST(Arena, DefaultAlignmentIs256) {
  Arena arena(unmapped, 1 << 20, "gpu");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(addr(arena.allocate(1 + 37 * static_cast<std::size_t>(i))) % 256, 0u);
}

TEST(Arena, FillsToTheLastByteThenRefuses) {
  Arena arena(unmapped, 1024, "exact");
  EXPECT_EQ(addr(arena.allocate(1000, 1)), addr(unmapped));
  EXPECT_EQ(addr(arena.allocate(24, 1)), addr(unmapped) + 1000);
  EXPECT_EQ(arena.used(), 1024u);
  EXPECT_EQ(arena.try_allocate(1, 1), nullptr);
  EXPECT_EQ(arena.used(), 1024u) << "a failed request must not move the bump pointer";
}

TEST(Arena, ZeroBytesReturnsTheAlignedPositionWithoutAdvancing) {
  Arena arena(unmapped, 1024, "zero");
  arena.allocate(10, 1);
  void* p = arena.allocate(0);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(addr(p), addr(unmapped) + 256);
  EXPECT_EQ(arena.used(), 10u);
  EXPECT_EQ(addr(arena.allocate(1)), addr(p)) << "the next allocation starts where the empty one pointed";
}

TEST(Arena, ResetFreesEverythingAndHighWaterRemembers) {
  Arena arena(unmapped, 1 << 16, "scratch");
  for (int run = 0; run < 3; ++run) {
    void* first = arena.allocate(1000);
    EXPECT_EQ(addr(first), addr(unmapped)) << "each run starts at the base again";
    arena.allocate(run == 1 ? 20000 : 500);
    arena.reset();
    EXPECT_EQ(arena.used(), 0u);
  }
  EXPECT_EQ(arena.high_water(), 1024u + 20000u);
}

TEST(Arena, RandomRequestsNeverOverlapAndStayInside) {
  std::vector<std::byte> region(1 << 16);
  Arena arena(region.data(), region.size(), "random");
  std::mt19937 rng(7);
  for (int run = 0; run < 50; ++run) {
    std::vector<std::pair<std::uintptr_t, std::size_t>> live;
    while (true) {
      const std::size_t bytes = rng() % 3000;
      const std::size_t alignment = std::size_t{1} << (rng() % 10);
      void* p = arena.try_allocate(bytes, alignment);
      if (!p) break;
      ASSERT_EQ(addr(p) % alignment, 0u);
      ASSERT_LE(addr(p) + bytes, addr(region.data()) + region.size());
      if (!live.empty()) {
        ASSERT_GE(addr(p), live.back().first + live.back().second);
      }
      live.emplace_back(addr(p), bytes);
      std::memset(p, run, bytes);
    }
    arena.reset();
  }
}

TEST(Arena, FullArenaErrorNamesArenaRequestCapacityAndUse) {
  Arena arena(unmapped, 4096, "stream:3");
  arena.allocate(3000);
  try {
    arena.allocate(2000);
    FAIL() << "2000 bytes must not fit after 3000 of 4096";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("arena 'stream:3'"), std::string::npos) << what;
    EXPECT_NE(what.find("2000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("3000 of 4096 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("reset()"), std::string::npos) << "says what to do: " << what;
  }
}

TEST(Arena, HugeRequestDoesNotWrapAround) {
  Arena arena(unmapped, 4096, "huge");
  arena.allocate(16);
  EXPECT_EQ(arena.try_allocate(SIZE_MAX - 8, 1), nullptr);
  EXPECT_EQ(arena.try_allocate(SIZE_MAX), nullptr);
  EXPECT_EQ(arena.used(), 16u);
}

TEST(Arena, AlignmentThatIsNotAPowerOfTwoIsAnError) {
  Arena arena(unmapped, 4096, "align");
  for (std::size_t bad : {0u, 3u, 48u, 1000u}) {
    try {
      arena.try_allocate(8, bad);
      FAIL() << "alignment " << bad << " must be refused";
    } catch (const tessera::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("alignment " + std::to_string(bad) + " is not a power of two"), std::string::npos) << what;
      EXPECT_NE(what.find("'align'"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(arena.used(), 0u);
}

TEST(Arena, NullBaseIsAnError) {
  EXPECT_THROW(Arena(nullptr, 64, "null"), tessera::Error);
  Arena empty(nullptr, 0, "empty");  // nothing to hand out, nothing wrong
  EXPECT_EQ(empty.try_allocate(1), nullptr);
}

TEST(Arena, MovedFromArenaHandsOutNothing) {
  Arena a(unmapped, 4096, "moved");
  a.allocate(100);
  Arena b(std::move(a));
  EXPECT_EQ(b.used(), 100u);
  EXPECT_EQ(b.capacity(), 4096u);
  EXPECT_EQ(a.try_allocate(1), nullptr);  // NOLINT(bugprone-use-after-move): the contract under test
  std::vector<Arena> per_worker;
  per_worker.push_back(std::move(b));
  EXPECT_EQ(addr(per_worker[0].allocate(1)), addr(unmapped) + 256);
}
