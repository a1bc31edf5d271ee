// PoolAllocator: blocks never overlap (checked against an interval model and by writing tags
// into them), freed memory coalesces back into one range, the errors name what was wrong, and
// four threads churning at once leave the pool empty. Then format_bytes / parse_bytes.
#include <tessera/memory/bytes.hpp>
#include <tessera/memory/pool_allocator.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using tessera::PoolAllocator;

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Sizes spread evenly over orders of magnitude, like a real mix of small and large buffers.
std::size_t log_uniform(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  std::uniform_real_distribution<double> exponent(std::log(double(lo)), std::log(double(hi)));
  return static_cast<std::size_t>(std::exp(exponent(rng)));
}

struct Block {
  void* p;
  std::size_t bytes;
  std::uint64_t tag;
};

// The first and last 8 bytes of a block carry its tag: a block that overlaps another has its
// tag overwritten, and ASan/TSan see the overlapping writes too.
void write_tag(const Block& b) {
  if (b.bytes < 16) return;
  std::memcpy(b.p, &b.tag, 8);
  std::memcpy(static_cast<std::byte*>(b.p) + b.bytes - 8, &b.tag, 8);
}
bool tag_intact(const Block& b) {
  if (b.bytes < 16) return true;
  std::uint64_t head, tail;
  std::memcpy(&head, b.p, 8);
  std::memcpy(&tail, static_cast<std::byte*>(b.p) + b.bytes - 8, 8);
  return head == b.tag && tail == b.tag;
}

// The model: live intervals [start, start + bytes), keyed by start. A new block overlaps a live
// one exactly when it overlaps its predecessor or its successor in address order.
class IntervalModel {
 public:
  ::testing::AssertionResult insert(const void* p, std::size_t bytes) {
    const std::uintptr_t lo = addr(p), hi = lo + std::max<std::size_t>(bytes, 1);
    auto next = live_.lower_bound(lo);
    if (next != live_.end() && next->first < hi)
      return ::testing::AssertionFailure() << "block at " << lo << " overlaps the live block at " << next->first;
    if (next != live_.begin() && std::prev(next)->second > lo)
      return ::testing::AssertionFailure()
             << "block at " << lo << " overlaps the live block at " << std::prev(next)->first;
    live_.emplace(lo, hi);
    return ::testing::AssertionSuccess();
  }
  void erase(const void* p) { live_.erase(addr(p)); }

 private:
  std::map<std::uintptr_t, std::uintptr_t> live_;
};

// An address no process maps (in the x86-64 ASan shadow gap): a pool that dereferenced its
// region would crash here, as it would on GPU memory.
void* const unmapped = reinterpret_cast<void*>(std::uintptr_t{1} << 40);

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no tessera::Error thrown)";
}

}  // namespace

// The example of docs/memory.md ("Allocators"); keep the text between the DOC markers identical.
TEST(PoolAllocator, DocExample) {
  // DOC memory-pool-example begin
  // One region, reserved once at start-up: cudaMalloc on a GPU, plain host memory here.
  std::vector<std::byte> region(64 << 20);
  tessera::PoolAllocator pool(region.data(), region.size(), "sim:0");

  void* row = pool.allocate(1000);           // from the 1 KiB size class, 256-byte aligned
  void* frame = pool.allocate(3 << 20);      // 3 MiB, best fit from the free ranges
  std::size_t in_use = pool.bytes_in_use();  // 1 KiB + 3 MiB

  pool.deallocate(row, 1000);  // with the size that was passed to allocate
  pool.deallocate(frame, 3 << 20);

  std::string message;
  try {
    pool.deallocate(frame, 3 << 20);  // a double free
  } catch (const tessera::Error& e) {
    message = e.what();  // "pool 'sim:0': deallocate(0x..., 3145728 bytes): not a live allocation ..."
  }
  void* too_big = pool.try_allocate(100 << 20);  // nullptr: the memory layer evicts and retries
  // DOC memory-pool-example end
  EXPECT_EQ(addr(row) % 256, 0u);
  EXPECT_EQ(in_use, KiB + 3 * MiB);
  EXPECT_NE(message.find("pool 'sim:0': deallocate("), std::string::npos) << message;
  EXPECT_NE(message.find("3145728 bytes): not a live allocation"), std::string::npos) << message;
  EXPECT_EQ(too_big, nullptr);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(PoolAllocator, RoundsSmallRequestsToPowerOfTwoClassesAndLargeOnesTo256) {
  std::vector<std::byte> region(4 * MiB);
  PoolAllocator pool(region.data(), region.size(), "round");
  EXPECT_EQ(pool.block_bytes(0), 256u);
  EXPECT_EQ(pool.block_bytes(1), 256u);
  EXPECT_EQ(pool.block_bytes(256), 256u);
  EXPECT_EQ(pool.block_bytes(257), 512u);
  EXPECT_EQ(pool.block_bytes(1000), 1024u);
  EXPECT_EQ(pool.block_bytes(MiB), MiB);
  EXPECT_EQ(pool.block_bytes(MiB + 1), MiB + 256);
  PoolAllocator small_classes(region.data(), region.size(), "small", {.largest_class = 4 * KiB});
  EXPECT_EQ(small_classes.block_bytes(5000), 5120u);
}

TEST(PoolAllocator, EveryPointerIsAlignedEvenOnAMisalignedRegion) {
  std::vector<std::byte> storage(8 * MiB + 512);
  std::byte* base = storage.data() + (256 - addr(storage.data()) % 256) % 256 + 1;  // 1 past a 256 boundary
  PoolAllocator pool(base, 8 * MiB, "misaligned");
  EXPECT_EQ(pool.capacity(), 8 * MiB - 256) << "the 255 bytes skipped and the partial tail are not handed out";
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t bytes : {0ul, 1ul, 255ul, 256ul, 257ul, 4000ul, 70000ul, MiB, MiB + 1, 2 * MiB + 3}) {
    void* p = pool.allocate(bytes);
    EXPECT_EQ(addr(p) % PoolAllocator::alignment, 0u) << bytes << " bytes";
    EXPECT_GE(addr(p), addr(base));
    EXPECT_LE(addr(p) + bytes, addr(base) + 8 * MiB);
    blocks.emplace_back(p, bytes);
  }
  for (auto [p, bytes] : blocks) pool.deallocate(p, bytes);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

// A fixed-seed random sequence of allocations and frees of 1 B to 4 MiB, with the pool near
// full much of the time: no block overlaps a live one, tags survive, and the byte count adds up.
// Then everything freed coalesces back into one range the size of the pool.
static void random_churn_against_the_model(tessera::PoolOptions options) {
  std::vector<std::byte> region(64 * MiB);
  PoolAllocator pool(region.data(), region.size(), "random", options);
  IntervalModel model;
  std::vector<Block> live;
  std::size_t expected_in_use = 0;
  std::mt19937_64 rng(42);
  int failures = 0;

  auto free_one = [&](std::size_t i) {
    Block b = live[i];
    ASSERT_TRUE(tag_intact(b)) << "block " << b.tag << " was overwritten by an overlapping block";
    pool.deallocate(b.p, b.bytes);
    model.erase(b.p);
    expected_in_use -= pool.block_bytes(b.bytes);
    live[i] = live.back();
    live.pop_back();
  };
  for (std::uint64_t step = 0; step < 40000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      const std::size_t bytes = log_uniform(rng, 1, 4 * MiB);
      void* p = pool.try_allocate(bytes);
      if (!p) {
        ++failures;
        ASSERT_FALSE(live.empty()) << "an empty pool refused " << bytes << " bytes";
        free_one(rng() % live.size());
        continue;
      }
      ASSERT_EQ(addr(p) % 256, 0u);
      ASSERT_GE(addr(p), addr(region.data()));
      ASSERT_LE(addr(p) + bytes, addr(region.data()) + region.size());
      ASSERT_TRUE(model.insert(p, bytes)) << "step " << step;
      live.push_back({p, bytes, step});
      write_tag(live.back());
      expected_in_use += pool.block_bytes(bytes);
    } else {
      free_one(rng() % live.size());
    }
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(pool.bytes_in_use(), expected_in_use) << "step " << step;
  }
  EXPECT_GT(failures, 100) << "the sequence should run the pool out of memory often";

  while (!live.empty()) free_one(live.size() - 1);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  void* everything = pool.allocate(pool.capacity());  // trims the empty slabs, then one range
  EXPECT_EQ(addr(everything), addr(region.data()) + (256 - addr(region.data()) % 256) % 256);
  pool.deallocate(everything, pool.capacity());
  EXPECT_EQ(pool.largest_free_range(), pool.capacity());
}

TEST(PoolAllocator, RandomAllocFreeNeverOverlapsAndCoalescesBackToOneRange) { random_churn_against_the_model({}); }

TEST(PoolAllocator, RandomAllocFreeWithoutThreadCaches) { random_churn_against_the_model({.thread_cache_bytes = 0}); }

TEST(PoolAllocator, RandomAllocFreeWithSmallClassesAndSlabs) {
  random_churn_against_the_model({.largest_class = 64 * KiB, .slab_bytes = 16 * KiB, .thread_cache_bytes = 64 * KiB});
}

TEST(PoolAllocator, TrimReturnsEmptySlabsToTheFreeRanges) {
  std::vector<std::byte> region(16 * MiB);
  PoolAllocator pool(region.data(), region.size(), "trim");
  void* keep = pool.allocate(100);  // its 16 KiB slab goes first, at the start of the region
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(pool.allocate(4 * KiB));
  for (void* p : blocks) pool.deallocate(p, 4 * KiB);
  EXPECT_LT(pool.largest_free_range(), pool.capacity() - 4 * MiB) << "empty slabs stay with their class";
  pool.trim();
  EXPECT_GE(pool.largest_free_range(), pool.capacity() - 16 * KiB) << "only the slab holding `keep` is left";
  pool.deallocate(keep, 100);
  pool.trim();
  EXPECT_EQ(pool.largest_free_range(), pool.capacity());
}

TEST(PoolAllocator, LargeRequestsAreBestFitAndFreedNeighboursCoalesce) {
  std::vector<std::byte> region(16 * MiB);
  PoolAllocator pool(region.data(), region.size(), "best-fit");
  void* a = pool.allocate(2 * MiB);
  void* b = pool.allocate(2 * MiB);
  void* c = pool.allocate(3 * MiB);
  void* d = pool.allocate(2 * MiB);  // then 7 MiB free at the end
  pool.deallocate(c, 3 * MiB);
  pool.deallocate(a, 2 * MiB);
  EXPECT_EQ(pool.allocate(2 * MiB), a) << "the 2 MiB hole fits exactly; the 3 MiB hole and the tail do not";
  EXPECT_EQ(pool.allocate(3 * MiB), c);
  pool.deallocate(a, 2 * MiB);
  pool.deallocate(c, 3 * MiB);
  EXPECT_EQ(pool.largest_free_range(), pool.capacity() - 9 * MiB);
  pool.deallocate(d, 2 * MiB);  // joins the 3 MiB hole and the tail
  EXPECT_EQ(pool.largest_free_range(), pool.capacity() - 4 * MiB);
  pool.deallocate(b, 2 * MiB);  // joins everything
  EXPECT_EQ(pool.largest_free_range(), pool.capacity());
}

TEST(PoolAllocator, SmallAndLargeRequestsShareTheWholeRegion) {
  std::vector<std::byte> region(8 * MiB);
  PoolAllocator pool(region.data(), region.size(), "shared");
  std::vector<void*> blocks;
  while (void* p = pool.try_allocate(300)) blocks.push_back(p);  // the 512 B class takes everything
  // Slabs start on 16 KiB boundaries, so less than 16 KiB at the end may stay unused.
  EXPECT_GT(blocks.size() * 512, pool.capacity() - 16 * KiB);
  EXPECT_EQ(pool.try_allocate(2 * MiB), nullptr);
  for (void* p : blocks) pool.deallocate(p, 300);
  void* large = pool.allocate(pool.capacity());  // only possible once trim gave every slab back
  pool.deallocate(large, pool.capacity());
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(PoolAllocator, NeverTouchesTheRegion) {
  PoolAllocator pool(unmapped, 1024 * MiB, "gpu-like");
  std::mt19937_64 rng(3);
  std::vector<std::pair<void*, std::size_t>> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2) {
      const std::size_t bytes = log_uniform(rng, 1, 16 * MiB);
      if (void* p = pool.try_allocate(bytes)) live.emplace_back(p, bytes);
    } else {
      const std::size_t i = rng() % live.size();
      pool.deallocate(live[i].first, live[i].second);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (auto [p, bytes] : live) pool.deallocate(p, bytes);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

// Four threads churn mixed sizes at once. Overlapping blocks would show up as overwritten tags
// (and as races under TSan); at a pause every live block of every thread is checked against
// the others, and at the end the pool is empty and whole again.
TEST(PoolAllocator, FourThreadsChurningShareThePoolSafely) {
  constexpr int threads = 4;
  const int steps = 20000;
  std::vector<std::byte> region(64 * MiB);
  PoolAllocator pool(region.data(), region.size(), "shared-by-4");
  std::vector<std::vector<Block>> live(threads);
  std::vector<int> overwritten(threads, 0);

  auto churn = [&](int t, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Block>& mine = live[static_cast<std::size_t>(t)];
    for (int step = 0; step < steps; ++step) {
      if (mine.empty() || rng() % 100 < 52) {
        const std::size_t bytes = log_uniform(rng, 64, 2 * MiB);
        if (void* p = pool.try_allocate(bytes)) {
          mine.push_back({p, bytes, (std::uint64_t(t) << 32) | std::uint64_t(step)});
          write_tag(mine.back());
          continue;
        }
      }
      if (mine.empty()) continue;
      const std::size_t i = rng() % mine.size();
      if (!tag_intact(mine[i])) ++overwritten[static_cast<std::size_t>(t)];
      pool.deallocate(mine[i].p, mine[i].bytes);
      mine[i] = mine.back();
      mine.pop_back();
    }
  };
  auto run_all = [&](std::uint64_t round) {
    std::vector<std::thread> pool_threads;
    for (int t = 0; t < threads; ++t) pool_threads.emplace_back(churn, t, round * 100 + std::uint64_t(t));
    for (auto& th : pool_threads) th.join();
  };

  run_all(1);
  IntervalModel model;
  std::size_t expected_in_use = 0;
  for (const auto& mine : live)
    for (const Block& b : mine) {
      ASSERT_TRUE(model.insert(b.p, b.bytes)) << "blocks of different threads overlap";
      EXPECT_TRUE(tag_intact(b));
      expected_in_use += pool.block_bytes(b.bytes);
    }
  EXPECT_EQ(pool.bytes_in_use(), expected_in_use);

  run_all(2);  // carry on from the live sets of the first round
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(overwritten[static_cast<std::size_t>(t)], 0) << "thread " << t;
    for (const Block& b : live[static_cast<std::size_t>(t)]) pool.deallocate(b.p, b.bytes);
  }
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  void* everything = pool.allocate(pool.capacity());
  pool.deallocate(everything, pool.capacity());
}

// Blocks allocated on one thread and freed on another (a producer handing buffers to a
// consumer): a double free is caught on a third thread, and everything comes back.
TEST(PoolAllocator, BlocksFreedOnAnotherThreadAndDoubleFreesAcrossThreads) {
  std::vector<std::byte> region(32 * MiB);
  PoolAllocator pool(region.data(), region.size(), "handoff");
  std::vector<Block> produced;
  std::thread producer([&] {
    std::mt19937_64 rng(5);
    for (std::uint64_t i = 0; i < 3000; ++i) {
      const std::size_t bytes = log_uniform(rng, 16, 64 * KiB);
      produced.push_back({pool.allocate(bytes), bytes, i});
      write_tag(produced.back());
    }
  });
  producer.join();  // the handoff: everything the producer wrote happens before what follows
  IntervalModel model;
  for (const Block& b : produced) ASSERT_TRUE(model.insert(b.p, b.bytes));
  std::thread consumer([&] {
    for (const Block& b : produced) {
      EXPECT_TRUE(tag_intact(b));
      pool.deallocate(b.p, b.bytes);
    }
  });
  consumer.join();
  std::string twice;
  std::thread third([&] { twice = message_of([&] { pool.deallocate(produced[7].p, produced[7].bytes); }); });
  third.join();
  EXPECT_NE(twice.find("already free"), std::string::npos) << twice;
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  void* everything = pool.allocate(pool.capacity());  // the threads' caches went back as they exited
  pool.deallocate(everything, pool.capacity());
}

// A thread keeps a cache for a pool that is destroyed before the thread ends, and then uses a
// new pool (perhaps over the same region): nothing of the old pool is touched again.
TEST(PoolAllocator, AThreadMayOutliveThePoolsItUsed) {
  std::vector<std::byte> region(8 * MiB);
  auto first = std::make_unique<PoolAllocator>(region.data(), region.size(), "first");
  std::mutex step_mutex;
  std::condition_variable step_changed;
  int step = 0;
  auto wait_for = [&](int s) {
    std::unique_lock lock(step_mutex);
    step_changed.wait(lock, [&] { return step == s; });
  };
  auto advance = [&] {
    std::lock_guard lock(step_mutex);
    ++step;
    step_changed.notify_all();
  };
  std::thread worker([&] {
    void* p = first->allocate(1000);
    first->deallocate(p, 1000);  // now in this thread's cache for `first`
    advance();
    wait_for(2);
    PoolAllocator second(region.data(), region.size(), "second");
    void* q = second.allocate(1000);
    EXPECT_EQ(q, p) << "a fresh pool over the same region starts at its beginning too";
    second.deallocate(q, 1000);
  });
  wait_for(1);
  first.reset();
  advance();
  worker.join();
}

TEST(PoolAllocator, FullPoolErrorNamesPoolRequestUseCapacityAndLargestRange) {
  std::vector<std::byte> region(64 * MiB + 256);
  std::byte* base = region.data() + (256 - addr(region.data()) % 256) % 256;
  PoolAllocator pool(base, 64 * MiB, "sim:0");
  void* most = pool.allocate(64 * MiB - 1536 * KiB);  // 62.5 MiB
  const std::string what = message_of([&] { pool.allocate(3 * MiB); });
  EXPECT_NE(what.find("pool 'sim:0' cannot allocate 3.0 MiB (3145728 bytes)"), std::string::npos) << what;
  EXPECT_NE(what.find("62.5 MiB of 64.0 MiB in use"), std::string::npos) << what;
  EXPECT_NE(what.find("largest free range 1.5 MiB"), std::string::npos) << what;
  EXPECT_NE(what.find("deallocate blocks"), std::string::npos) << "says what to do: " << what;
  EXPECT_EQ(pool.try_allocate(3 * MiB), nullptr);

  const std::string huge = message_of([&] { pool.allocate(std::size_t{1} << 40); });
  EXPECT_NE(huge.find("cannot allocate 1.0 TiB"), std::string::npos) << huge;
  EXPECT_EQ(pool.try_allocate(SIZE_MAX), nullptr);

  EXPECT_EQ(pool.bytes_in_use(), 64 * MiB - 1536 * KiB) << "failed requests change nothing";
  pool.deallocate(most, 64 * MiB - 1536 * KiB);
}

TEST(PoolAllocator, PointerOutsideTheRegionIsAnError) {
  std::vector<std::byte> region(4 * MiB), elsewhere(4096);
  PoolAllocator pool(region.data(), region.size(), "outside");
  for (void* foreign : {static_cast<void*>(elsewhere.data()), static_cast<void*>(region.data() + region.size())}) {
    const std::string what = message_of([&] { pool.deallocate(foreign, 100); });
    EXPECT_NE(what.find("pool 'outside'"), std::string::npos) << what;
    EXPECT_NE(what.find("outside the pool's region"), std::string::npos) << what;
  }
  pool.deallocate(nullptr, 100);  // like free(nullptr)
}

TEST(PoolAllocator, DoubleFreeIsAnErrorAndLeavesThePoolIntact) {
  std::vector<std::byte> region(8 * MiB);
  PoolAllocator pool(region.data(), region.size(), "twice");
  void* small = pool.allocate(1000);
  void* other = pool.allocate(1000);
  void* large = pool.allocate(3 * MiB);
  pool.deallocate(small, 1000);
  pool.deallocate(large, 3 * MiB);

  const std::string small_twice = message_of([&] { pool.deallocate(small, 1000); });
  EXPECT_NE(small_twice.find("pool 'twice'"), std::string::npos) << small_twice;
  EXPECT_NE(small_twice.find("already free"), std::string::npos) << small_twice;
  const std::string large_twice = message_of([&] { pool.deallocate(large, 3 * MiB); });
  EXPECT_NE(large_twice.find("not a live allocation"), std::string::npos) << large_twice;
  EXPECT_NE(large_twice.find("3145728 bytes"), std::string::npos) << large_twice;

  EXPECT_EQ(pool.bytes_in_use(), 1024u);
  EXPECT_EQ(pool.allocate(1000), small) << "the freed block is handed out once, not twice";
  EXPECT_EQ(pool.allocate(3 * MiB), large);
  pool.deallocate(small, 1000);
  pool.deallocate(other, 1000);
  pool.deallocate(large, 3 * MiB);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(PoolAllocator, WrongSizeOrInteriorPointerIsAnError) {
  std::vector<std::byte> region(8 * MiB);
  PoolAllocator pool(region.data(), region.size(), "sizes");
  void* small = pool.allocate(1000);
  void* large = pool.allocate(3 * MiB);

  const std::string other_class = message_of([&] { pool.deallocate(small, 5000); });
  EXPECT_NE(other_class.find("not a live 8.0 KiB block"), std::string::npos) << other_class;
  EXPECT_NE(other_class.find("slab of the 1.0 KiB class"), std::string::npos) << other_class;
  const std::string interior = message_of([&] { pool.deallocate(static_cast<std::byte*>(small) + 256, 1000); });
  EXPECT_NE(interior.find("not the start of a block"), std::string::npos) << interior;
  const std::string large_size = message_of([&] { pool.deallocate(large, 2 * MiB); });
  EXPECT_NE(large_size.find("allocated as 3.0 MiB"), std::string::npos) << large_size;
  const std::string large_as_small = message_of([&] { pool.deallocate(large, 100); });
  EXPECT_NE(large_as_small.find("not a live 256 B block"), std::string::npos) << large_as_small;

  EXPECT_EQ(pool.bytes_in_use(), 1024u + 3 * MiB);
  pool.deallocate(small, 1000);
  pool.deallocate(large, 3 * MiB);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(PoolAllocator, BadRegionsAndOptionsAreErrors) {
  std::vector<std::byte> region(MiB);
  EXPECT_NE(message_of([] { PoolAllocator(nullptr, MiB, "null"); }).find("null region"), std::string::npos);
  const std::string tiny = message_of([&] { PoolAllocator(region.data(), 100, "tiny"); });
  EXPECT_NE(tiny.find("pool 'tiny'"), std::string::npos) << tiny;
  EXPECT_NE(tiny.find("100 bytes"), std::string::npos) << tiny;
  const std::string largest = message_of([&] { PoolAllocator(region.data(), MiB, "opt", {.largest_class = 1000}); });
  EXPECT_NE(largest.find("largest_class is 1000"), std::string::npos) << largest;
  const std::string slab = message_of([&] { PoolAllocator(region.data(), MiB, "opt", {.slab_bytes = 4096}); });
  EXPECT_NE(slab.find("slab_bytes is 4096"), std::string::npos) << slab;
}

TEST(PoolByteCounts, FormatUsesBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(tessera::format_bytes(0), "0 B");
  EXPECT_EQ(tessera::format_bytes(1023), "1023 B");
  EXPECT_EQ(tessera::format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(tessera::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(tessera::format_bytes(3 * MiB), "3.0 MiB");
  EXPECT_EQ(tessera::format_bytes(MiB - 1), "1.0 MiB");
  EXPECT_EQ(tessera::format_bytes(std::size_t{80} << 30), "80.0 GiB");
}

TEST(PoolByteCounts, ParseAcceptsBinaryUnits) {
  EXPECT_EQ(tessera::parse_bytes("256MiB"), 256 * MiB);
  EXPECT_EQ(tessera::parse_bytes("256M"), 256 * MiB);
  EXPECT_EQ(tessera::parse_bytes("4K"), 4 * KiB);
  EXPECT_EQ(tessera::parse_bytes("4KiB"), 4 * KiB);
  EXPECT_EQ(tessera::parse_bytes("2GiB"), std::size_t{2} << 30);
  EXPECT_EQ(tessera::parse_bytes("1T"), std::size_t{1} << 40);
  EXPECT_EQ(tessera::parse_bytes("512B"), 512u);
  EXPECT_EQ(tessera::parse_bytes("123"), 123u);
  EXPECT_EQ(tessera::parse_bytes("0"), 0u);
}

TEST(PoolByteCounts, ParseRejectsAnythingElseNamingTheText) {
  for (const char* bad :
       {"", "MiB", "12MB", "1.5GiB", "-1", "256 MiB", "256mib", "99999999999999999999", "17179869184GiB", "4KiBs"}) {
    const std::string what = message_of([&] { tessera::parse_bytes(bad); });
    EXPECT_NE(what.find("cannot read '" + std::string(bad) + "' as a byte count"), std::string::npos) << what;
    EXPECT_NE(what.find("256MiB"), std::string::npos) << "shows an accepted form: " << what;
  }
  EXPECT_NE(message_of([] { tessera::parse_bytes("12MB"); }).find("decimal units are ambiguous"), std::string::npos);
}
