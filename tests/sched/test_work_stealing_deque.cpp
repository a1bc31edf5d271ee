// The Chase–Lev deque under an owner and several thieves: every item comes out exactly once.
#include <tessera/sched/detail/work_stealing_deque.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using tessera::detail::WorkStealingDeque;

TEST(WorkStealingDeque, OwnerIsLifoThiefIsFifo) {
  WorkStealingDeque<int*> dq(4);
  int items[3] = {0, 1, 2};
  for (int& i : items) dq.push(&i);
  EXPECT_EQ(dq.size(), 3u);
  EXPECT_EQ(dq.steal(), &items[0]);
  EXPECT_EQ(dq.pop(), &items[2]);
  EXPECT_EQ(dq.pop(), &items[1]);
  EXPECT_EQ(dq.pop(), nullptr);
  EXPECT_EQ(dq.steal(), nullptr);
  EXPECT_TRUE(dq.empty());
}

TEST(WorkStealingDeque, GrowsKeepingOrder) {
  WorkStealingDeque<int*> dq(2);
  std::vector<int> items(1000);
  for (int& i : items) dq.push(&i);
  EXPECT_GE(dq.capacity(), 1000);
  for (std::size_t k = 0; k < 500; ++k) EXPECT_EQ(dq.steal(), &items[k]);
  for (std::size_t k = 999; k >= 500; --k) EXPECT_EQ(dq.pop(), &items[k]);
  EXPECT_EQ(dq.pop(), nullptr);
}

// The owner pushes and pops while thieves steal; each item must be taken exactly once, none
// lost, none duplicated. Small initial capacity so the ring grows under contention.
TEST(WorkStealingDeque, ConcurrentPushPopStealLosesAndDuplicatesNothing) {
  constexpr int total = 200000;
  constexpr int thieves = 3;
  std::vector<int> values(total);
  std::vector<std::atomic<int>> taken(total);
  for (auto& t : taken) t.store(0);
  WorkStealingDeque<int*> dq(8);
  std::atomic<bool> done{false};
  std::atomic<int> count{0};

  auto take = [&](int* p) {
    taken[static_cast<std::size_t>(p - values.data())].fetch_add(1, std::memory_order_relaxed);
    count.fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < thieves; ++t)
    pool.emplace_back([&] {
      while (!done.load(std::memory_order_acquire) || !dq.empty())
        if (int* p = dq.steal()) take(p);
    });
  for (int i = 0; i < total; ++i) {
    dq.push(&values[static_cast<std::size_t>(i)]);
    if (i % 3 == 0)
      if (int* p = dq.pop()) take(p);
  }
  while (int* p = dq.pop()) take(p);
  done.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();

  EXPECT_EQ(count.load(), total);
  for (int i = 0; i < total; ++i) ASSERT_EQ(taken[static_cast<std::size_t>(i)].load(), 1) << "item " << i;
}

// Many rounds of contention on the last item: owner pop versus thieves.
TEST(WorkStealingDeque, LastItemRaceHasOneWinner) {
  WorkStealingDeque<int*> dq(2);
  int item = 0;
  for (int round = 0; round < 2000; ++round) {
    dq.push(&item);
    std::atomic<int> winners{0};
    std::atomic<bool> go{false};
    std::thread thief([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      if (dq.steal()) winners.fetch_add(1);
    });
    go.store(true, std::memory_order_release);
    if (dq.pop()) winners.fetch_add(1);
    thief.join();
    while (dq.pop()) winners.fetch_add(1);
    ASSERT_EQ(winners.load(), 1) << "round " << round;
  }
}
