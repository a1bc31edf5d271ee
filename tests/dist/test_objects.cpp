// Mobile objects across ranks: remote handlers, migration with messages in flight (exactly once,
// in order per sender), handlers that send, errors that reach every rank, rebalancing.
#include "mpi_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/dist/objects.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace td = tessera::dist;

namespace {

constexpr int max_ranks = 8;

struct Counter {
  long count = 0;
  long sum = 0;
};

// Every rank learns every rank's flag (a tiny all-gather over the communicator under test).
std::vector<int> gather_flags(int flag) {
  auto& comm = test_comm();
  std::vector<int> all(static_cast<std::size_t>(comm.size()));
  std::vector<td::Request> rx;
  for (int r = 0; r < comm.size(); ++r)
    if (r != comm.rank()) rx.push_back(comm.recv(std::span<int>(&all[static_cast<std::size_t>(r)], 1), r, 90));
  all[static_cast<std::size_t>(comm.rank())] = flag;
  std::vector<td::Request> tx;
  for (int r = 0; r < comm.size(); ++r)
    if (r != comm.rank()) tx.push_back(comm.send(std::span<const int>(&flag, 1), r, 90));
  for (auto& q : rx) q.wait();
  for (auto& q : tx) q.wait();
  return all;
}

}  // namespace

TEST(DistObjects, HandlersRunWhereTheObjectsLive) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  std::atomic<int> wrong_rank{0};
  auto bump = objects.handler<Counter, long>("bump", [&](Counter& c, td::HandlerContext& ctx, long by) {
    if (static_cast<std::uint64_t>(ctx.rank()) != ctx.self().id / 100) ++wrong_rank;
    c.count += 1;
    c.sum += by;
  });
  const int per_rank = 8;
  for (int k = 0; k < per_rank; ++k) objects.add(td::ObjectName{static_cast<std::uint64_t>(r * 100 + k)}, Counter{});
  // Every rank sends every object (r + 1) * 10 + k, three times.
  for (int rep = 0; rep < 3; ++rep)
    for (int owner = 0; owner < n; ++owner)
      for (int k = 0; k < per_rank; ++k)
        objects.send(td::ObjectName{static_cast<std::uint64_t>(owner * 100 + k)}, bump,
                     static_cast<long>((r + 1) * 10 + k));
  objects.wait();
  long senders_sum = 0;
  for (int s = 0; s < n; ++s) senders_sum += (s + 1) * 10;
  for (int k = 0; k < per_rank; ++k) {
    const auto& c = objects.local<Counter>(td::ObjectName{static_cast<std::uint64_t>(r * 100 + k)});
    EXPECT_EQ(c.count, 3L * n);
    EXPECT_EQ(c.sum, 3 * (senders_sum + static_cast<long>(n) * k));
  }
  EXPECT_EQ(objects.local_names().size(), static_cast<std::size_t>(per_rank));
  EXPECT_EQ(wrong_rank.load(), 0);
  EXPECT_EQ(objects.statistics().handled, static_cast<std::uint64_t>(3 * n * per_rank));
}

namespace {

// Records, per sending rank, how many messages arrived and whether any came out of order.
struct Tracker {
  std::uint64_t next[max_ranks] = {};
  std::uint64_t out_of_order = 0;
  /// Message `seq` from `sender` ran: counts it out of order unless it is the next one.
  void saw(std::int32_t sender, std::uint64_t seq) {
    if (seq != next[sender]) ++out_of_order;
    next[sender] = seq + 1;
  }
};

// The messages rank `sender` sends in MessagesFollowMigratingObjects: which object each goes to,
// from a generator seeded by the rank, so every rank can count what every object should get.
std::vector<int> targets_of(int sender, int messages, int objects) {
  std::mt19937 gen(1234u + static_cast<unsigned>(sender));
  std::uniform_int_distribution<int> pick(0, objects - 1);
  std::vector<int> t(static_cast<std::size_t>(messages));
  for (auto& x : t) x = pick(gen);
  return t;
}

}  // namespace

TEST(DistObjects, MessagesFollowMigratingObjectsExactlyOnceInOrder) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  ASSERT_LE(n, max_ranks);
  td::ObjectsOptions options;
  options.batch_bytes = 4096;  // many batches, so migrations land between them
  td::Objects objects(comm, options);
  auto deliver = objects.handler<Tracker, std::int32_t, std::uint64_t>(
      "deliver", [](Tracker& t, td::HandlerContext&, std::int32_t sender, std::uint64_t seq) {
        t.saw(sender, seq);
      });
  const int num_objects = 24;
  const int total = 100000;  // across all ranks
  const int mine = total / n + (r < total % n ? 1 : 0);
  for (int k = r; k < num_objects; k += n) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Tracker{});
  objects.wait();  // every name registered before the storm

  const auto targets = targets_of(r, mine, num_objects);
  std::vector<std::uint64_t> seq(num_objects, 0);
  std::mt19937 gen(99u + static_cast<unsigned>(r));
  std::uniform_int_distribution<int> pick_object(0, num_objects - 1), pick_rank(0, n - 1);
  for (int i = 0; i < mine; ++i) {
    const int k = targets[static_cast<std::size_t>(i)];
    objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, deliver, static_cast<std::int32_t>(r),
                 seq[static_cast<std::size_t>(k)]++);
    if (i % 97 == 0) objects.migrate(td::ObjectName{static_cast<std::uint64_t>(pick_object(gen))}, pick_rank(gen));
  }
  objects.wait();

  // What each object should have seen from each sender.
  std::vector<std::vector<std::uint64_t>> expected(num_objects,
                                                   std::vector<std::uint64_t>(static_cast<std::size_t>(n), 0));
  for (int s = 0; s < n; ++s) {
    const int count = total / n + (s < total % n ? 1 : 0);
    for (int k : targets_of(s, count, num_objects))
      ++expected[static_cast<std::size_t>(k)][static_cast<std::size_t>(s)];
  }
  std::uint64_t local_objects = 0;
  for (auto name : objects.local_names()) {
    const auto& t = objects.local<Tracker>(name);
    EXPECT_EQ(t.out_of_order, 0u) << "object " << name.id;
    for (int s = 0; s < n; ++s)
      EXPECT_EQ(t.next[s], expected[name.id][static_cast<std::size_t>(s)]) << "object " << name.id << " sender " << s;
    ++local_objects;
  }
  const auto all = gather_flags(static_cast<int>(local_objects));
  int sum = 0;
  for (int x : all) sum += x;
  EXPECT_EQ(sum, num_objects);  // every object lives on exactly one rank
  const auto stats = objects.statistics();
  const auto moved = gather_flags(static_cast<int>(stats.migrated_out));
  int migrations = 0;
  for (int x : moved) migrations += x;
  if (n > 1) {
    EXPECT_GT(migrations, 0);
  }
}

// Many messages in a row to one object arrive as runs of frames in a batch and are queued and run
// from the batch in place: cut by a small handler burst, put back, split by migration requests,
// and packed message by message when their object moves. Each sender uses two handlers, so runs
// also mix handlers.
TEST(DistObjects, RunsOfMessagesToOneObjectStayInOrderThroughBurstsAndMigration) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  ASSERT_LE(n, max_ranks);
  td::ObjectsOptions options;
  options.batch_bytes = 3000;  // about 40 messages a batch
  options.handler_burst = 7;   // runs longer than a burst
  td::Objects objects(comm, options);
  auto check = [](Tracker& t, std::int32_t sender, std::uint64_t seq) {
    t.saw(sender, seq);
  };
  auto odd = objects.handler<Tracker, std::int32_t, std::uint64_t>(
      "odd", [&](Tracker& t, td::HandlerContext&, std::int32_t sender, std::uint64_t seq) { check(t, sender, seq); });
  auto even = objects.handler<Tracker, std::uint64_t, std::int32_t>(
      "even", [&](Tracker& t, td::HandlerContext&, std::uint64_t seq, std::int32_t sender) { check(t, sender, seq); });
  const int num_objects = 6, rounds = 40, run = 150;
  for (int k = r; k < num_objects; k += n) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Tracker{});
  objects.wait();
  std::vector<std::uint64_t> seq(num_objects, 0);
  std::mt19937 gen(7u + static_cast<unsigned>(r));
  std::uniform_int_distribution<int> pick_object(0, num_objects - 1), pick_rank(0, n - 1);
  for (int i = 0; i < rounds; ++i) {
    const int k = pick_object(gen);
    const td::ObjectName name{static_cast<std::uint64_t>(k)};
    for (int j = 0; j < run; ++j) {
      const std::uint64_t s = seq[static_cast<std::size_t>(k)]++;
      if (s % 2)
        objects.send(name, odd, static_cast<std::int32_t>(r), s);
      else
        objects.send(name, even, s, static_cast<std::int32_t>(r));
      if (j == run / 2) objects.migrate(td::ObjectName{static_cast<std::uint64_t>(pick_object(gen))}, pick_rank(gen));
    }
  }
  objects.wait();
  // Every sender's count per object, so each object's last sequence number can be checked.
  std::vector<int> sent(static_cast<std::size_t>(num_objects * max_ranks), 0);
  for (int k = 0; k < num_objects; ++k) {
    const auto all = gather_flags(static_cast<int>(seq[static_cast<std::size_t>(k)]));
    for (int s = 0; s < n; ++s) sent[static_cast<std::size_t>(k * max_ranks + s)] = all[static_cast<std::size_t>(s)];
  }
  std::uint64_t handled_here = 0;
  for (auto name : objects.local_names()) {
    const auto& t = objects.local<Tracker>(name);
    EXPECT_EQ(t.out_of_order, 0u) << "object " << name.id;
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(t.next[s], static_cast<std::uint64_t>(sent[name.id * max_ranks + static_cast<std::size_t>(s)]))
          << "object " << name.id << " sender " << s;
      handled_here += t.next[s];
    }
  }
  const auto handled = gather_flags(static_cast<int>(handled_here));
  int sum = 0;
  for (int x : handled) sum += x;
  EXPECT_EQ(sum, n * rounds * run);
}

namespace {
// Tracker's order check, and where an object's messages ran.
struct Spread : Tracker {
  std::uint64_t ran_on[max_ranks] = {};
};
}  // namespace

// Work stealing: every object starts on rank 0 and every rank sends each of them messages whose
// handlers take 50 us; the other ranks, with nothing to run in wait(), ask for work and take
// objects with their queued messages. Every message still runs once and in order per sender,
// and some run elsewhere than on rank 0.
TEST(DistObjects, IdleRanksStealObjectsWithTheirQueuedMessages) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  ASSERT_LE(n, max_ranks);
  td::ObjectsOptions options;
  options.steal_work = true;
  td::Objects objects(comm, options);
  auto work = objects.handler<Spread, std::int32_t, std::uint64_t>(
      "work", [](Spread& t, td::HandlerContext& ctx, std::int32_t sender, std::uint64_t seq) {
        t.saw(sender, seq);
        ++t.ran_on[ctx.rank()];
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
        while (std::chrono::steady_clock::now() < until) {
        }
      });
  const int num_objects = 16, per_object = 40;
  if (r == 0)
    for (int k = 0; k < num_objects; ++k) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Spread{});
  objects.wait();
  for (int j = 0; j < per_object; ++j)
    for (int k = 0; k < num_objects; ++k)
      objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, work, static_cast<std::int32_t>(r),
                   static_cast<std::uint64_t>(j));
  objects.wait();

  std::uint64_t handled_here = 0, ran_elsewhere = 0;
  for (auto name : objects.local_names()) {
    const auto& t = objects.local<Spread>(name);
    EXPECT_EQ(t.out_of_order, 0u) << "object " << name.id;
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(t.next[s], static_cast<std::uint64_t>(per_object)) << "object " << name.id << " sender " << s;
      handled_here += t.ran_on[s];
      if (s != 0) ran_elsewhere += t.ran_on[s];
    }
  }
  const auto handled = gather_flags(static_cast<int>(handled_here));
  const auto elsewhere = gather_flags(static_cast<int>(ran_elsewhere));
  const auto stolen = gather_flags(static_cast<int>(objects.statistics().stolen));
  int sum = 0, sum_elsewhere = 0, sum_stolen = 0;
  for (int s = 0; s < n; ++s) {
    sum += handled[static_cast<std::size_t>(s)];
    sum_elsewhere += elsewhere[static_cast<std::size_t>(s)];
    sum_stolen += stolen[static_cast<std::size_t>(s)];
  }
  EXPECT_EQ(sum, n * num_objects * per_object);
  if (n > 1) {
    EXPECT_GT(sum_stolen, 0);
    EXPECT_GT(sum_elsewhere, 0) << "no message ran on a rank other than 0";
  }
}

// Off (the default), nobody steals: the objects stay where they were added.
TEST(DistObjects, WithoutStealingObjectsStayPut) {
  auto& comm = test_comm();
  const int r = comm.rank();
  td::Objects objects(comm);
  auto work = objects.handler<Spread, std::int32_t, std::uint64_t>(
      "work", [](Spread& t, td::HandlerContext& ctx, std::int32_t, std::uint64_t) { ++t.ran_on[ctx.rank()]; });
  if (r == 0)
    for (int k = 0; k < 4; ++k) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Spread{});
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 50; ++j)
      objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, work, static_cast<std::int32_t>(r),
                   static_cast<std::uint64_t>(j));
  objects.wait();
  EXPECT_EQ(objects.local_names().size(), r == 0 ? 4u : 0u);
  EXPECT_EQ(objects.statistics().stolen, 0u);
}

TEST(DistObjects, HandlersSendMoreMessages) {
  // A token walks a ring of objects spread over the ranks, 200 hops, each hop a handler that
  // sends the next message from wherever it runs.
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  struct Station {
    long visits = 0;
  };
  const int stations = 3 * n;
  td::Handler<Station, int> pass = objects.handler<Station, int>("pass", [&](Station& s, td::HandlerContext& ctx,
                                                                             int left) {
    ++s.visits;
    if (left > 0)
      ctx.objects().send(td::ObjectName{(ctx.self().id + 1) % static_cast<std::uint64_t>(stations)}, pass, left - 1);
  });
  for (int k = r; k < stations; k += n) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Station{});
  objects.wait();
  if (r == 0) objects.send(td::ObjectName{0}, pass, 199);
  objects.wait();
  long visits = 0;
  for (auto name : objects.local_names()) {
    const long v = objects.local<Station>(name).visits;
    // 200 visits round a ring of `stations`: the first 200 % stations get one more.
    const long want = 200 / stations + (static_cast<long>(name.id) < 200 % stations ? 1 : 0);
    EXPECT_EQ(v, want) << "station " << name.id;
    visits += v;
  }
  EXPECT_GT(visits, 0);
}

TEST(DistObjects, AHandlerThatThrowsStopsEveryRank) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  auto explode = objects.handler<Counter, int>("explode", [](Counter& c, td::HandlerContext&, int x) {
    if (x == 13) throw std::runtime_error("unlucky number");
    c.count += x;
  });
  objects.add(td::ObjectName{static_cast<std::uint64_t>(r)}, Counter{});
  // No wait() between: the message waits at the name's home if it comes before the name.
  if (r == 0) objects.send(td::ObjectName{static_cast<std::uint64_t>(n - 1)}, explode, 13);
  try {
    objects.wait();
    FAIL() << "rank " << r << ": wait() returned after a handler threw";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank " + std::to_string(n - 1)), std::string::npos) << what;
    EXPECT_NE(what.find("'explode'"), std::string::npos) << what;
    EXPECT_NE(what.find("unlucky number"), std::string::npos) << what;
  }
  // The runtime refuses further messages with the same error.
  EXPECT_THROW(objects.send(td::ObjectName{0}, explode, 1), tessera::Error);
}

TEST(DistObjects, AMessageToANameNobodyRegisteredFailsOnItsSender) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  auto bump = objects.handler<Counter, long>("bump", [](Counter& c, td::HandlerContext&, long by) { c.count += by; });
  objects.add(td::ObjectName{static_cast<std::uint64_t>(r)}, Counter{});
  objects.wait();
  const int sender = n - 1;
  if (r == sender) objects.send(td::ObjectName{424242}, bump, 1L);
  objects.send(td::ObjectName{0}, bump, 1L);
  bool threw = false;
  try {
    objects.wait();
  } catch (const tessera::Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("object 424242"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'bump'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(threw, r == sender);
  // The good messages were all handled, and the runtime goes on.
  objects.send(td::ObjectName{0}, bump, 1L);
  objects.wait();
  if (r == 0) {
    EXPECT_EQ(objects.local<Counter>(td::ObjectName{0}).count, 2L * n);
  }
}

TEST(DistObjects, ANameRegisteredTwiceIsAnErrorOnOneRank) {
  auto& comm = test_comm();
  const int r = comm.rank();
  td::Objects objects(comm);
  objects.handler<Counter, long>("bump", [](Counter& c, td::HandlerContext&, long by) { c.count += by; });
  int errors = 0;
  if (r < 2) {
    try {
      objects.add(td::ObjectName{5}, Counter{});
    } catch (const tessera::Error& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find("already registered"), std::string::npos) << e.what();
    }
  }
  try {
    objects.wait();
  } catch (const tessera::Error& e) {
    ++errors;
    EXPECT_NE(std::string(e.what()).find("already registered"), std::string::npos) << e.what();
  }
  int total = 0;
  for (int x : gather_flags(errors)) total += x;
  EXPECT_EQ(total, comm.size() > 1 ? 1 : 0);
}

TEST(DistObjects, BadCallsAreErrors) {
  auto& comm = test_comm();
  td::Objects objects(comm);
  // A type with no handler yet.
  EXPECT_THROW(objects.add(td::ObjectName{1}, Counter{}), tessera::Error);
  objects.handler<Counter, long>("bump", [](Counter& c, td::HandlerContext&, long by) { c.count += by; });
  const auto name = td::ObjectName{static_cast<std::uint64_t>(1000 + comm.rank())};
  objects.add(name, Counter{});
  EXPECT_THROW(objects.add(name, Counter{}), tessera::Error);
  EXPECT_THROW(objects.migrate(name, comm.size()), tessera::Error);
  EXPECT_THROW(objects.migrate(name, -1), tessera::Error);
  EXPECT_THROW(objects.local<Tracker>(name), tessera::Error);  // another type
  EXPECT_THROW(objects.local<Counter>(td::ObjectName{777777}), tessera::Error);
  objects.wait();
}

TEST(DistObjects, RebalanceSpreadsObjectsByMeasuredLoad) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  auto work = objects.handler<Counter, long>("work", [](Counter& c, td::HandlerContext&, long spins) {
    volatile long x = 0;
    for (long i = 0; i < spins; ++i) x = x + i;
    c.count += 1;
  });
  const int num_objects = 8 * n;
  if (r == 0)
    for (int k = 0; k < num_objects; ++k) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Counter{});
  objects.wait();
  if (r == 0)
    for (int k = 0; k < num_objects; ++k) objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, work, 20000L);
  objects.wait();
  const std::size_t moved = objects.rebalance();
  if (r != 0) {
    EXPECT_EQ(moved, 0u);
  }
  const auto counts = gather_flags(static_cast<int>(objects.local_names().size()));
  int sum = 0;
  for (int c : counts) {
    sum += c;
    if (n > 1) {
      EXPECT_GE(c, 1) << "a rank got no object";
    }
  }
  EXPECT_EQ(sum, num_objects);
  if (n > 1) {
    EXPECT_LT(counts[0], num_objects);
  }
  // The names still reach the objects wherever they went.
  for (int k = 0; k < num_objects; ++k) objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, work, 10L);
  objects.wait();
  for (auto name : objects.local_names()) EXPECT_EQ(objects.local<Counter>(name).count, 1 + n) << name.id;
}

// Diffusion moves load to ring neighbours only; rounds of it spread the objects over every rank.
TEST(DistObjects, DiffusionSendsToNeighboursOnly) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  auto touch = objects.handler<Counter>("touch", [](Counter& c, td::HandlerContext&) { c.count += 1; });
  const int num_objects = 12 * n;
  if (r == 0)
    for (int k = 0; k < num_objects; ++k) objects.add(td::ObjectName{static_cast<std::uint64_t>(k)}, Counter{});
  objects.wait();
  // Nothing has run yet: the load is the number of objects.
  objects.rebalance(td::diffusion_balance());
  const auto after_one = gather_flags(static_cast<int>(objects.local_names().size()));
  int sum = 0;
  for (int q = 0; q < n; ++q) {
    sum += after_one[static_cast<std::size_t>(q)];
    const bool neighbour_of_0 = q == 1 || q == n - 1;
    if (q != 0 && !neighbour_of_0) {
      EXPECT_EQ(after_one[static_cast<std::size_t>(q)], 0) << "rank " << q << " is no neighbour of rank 0";
    }
    if (n > 1 && neighbour_of_0) {
      EXPECT_GT(after_one[static_cast<std::size_t>(q)], 0) << "rank " << q;
    }
  }
  EXPECT_EQ(sum, num_objects);
  for (int round = 0; round < 12; ++round) objects.rebalance(td::diffusion_balance());
  const auto spread = gather_flags(static_cast<int>(objects.local_names().size()));
  for (int q = 0; q < n; ++q) EXPECT_GE(spread[static_cast<std::size_t>(q)], 6) << "rank " << q << " after 13 rounds";
  for (int k = 0; k < num_objects; ++k) objects.send(td::ObjectName{static_cast<std::uint64_t>(k)}, touch);
  objects.wait();
  for (auto name : objects.local_names()) EXPECT_EQ(objects.local<Counter>(name).count, n) << name.id;
  // A policy that sends load to this rank itself, or an empty one, is refused.
  EXPECT_THROW(objects.rebalance(td::BalancePolicy{}), tessera::Error);
  EXPECT_THROW((void)td::diffusion_balance(0.0), tessera::Error);
  const td::BalancePolicy to_self = [](int rank, std::span<const double>) {
    return std::vector<std::pair<int, double>>{{rank, 1.0}};
  };
  try {
    objects.rebalance(to_self);
    ADD_FAILURE() << "a policy sending load to its own rank was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a policy sends non-negative load to other ranks"), std::string::npos);
  }
  objects.wait();
}

TEST(DistObjects, BusyHoldsTerminationForWorkAHandlerStarted) {
  // A handler hands work to another thread, which sends the result on later; wait() must not
  // return before it has.
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  td::Objects objects(comm);
  std::vector<std::thread> helpers;
  std::mutex helpers_mutex;
  auto result = objects.handler<Counter, long>("result", [](Counter& c, td::HandlerContext&, long v) { c.sum += v; });
  auto start = objects.handler<Counter, long>("start", [&](Counter&, td::HandlerContext& ctx, long v) {
    auto busy = std::make_shared<td::Busy>(ctx.objects().busy());
    std::lock_guard lock(helpers_mutex);
    helpers.emplace_back([&objects, busy, v, result, n] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      objects.send(td::ObjectName{static_cast<std::uint64_t>(n)}, result, v * v);
      busy->release();
    });
  });
  objects.add(td::ObjectName{static_cast<std::uint64_t>(r)}, Counter{});
  if (r == 0) objects.add(td::ObjectName{static_cast<std::uint64_t>(n)}, Counter{});
  objects.wait();
  objects.send(td::ObjectName{static_cast<std::uint64_t>(r)}, start, static_cast<long>(r + 1));
  objects.wait();
  if (r == 0) {
    long want = 0;
    for (int s = 1; s <= n; ++s) want += static_cast<long>(s) * s;
    EXPECT_EQ(objects.local<Counter>(td::ObjectName{static_cast<std::uint64_t>(n)}).sum, want);
  }
  for (auto& t : helpers) t.join();
}

TEST(DistObjects, PutAndGetReachSharedBuffersOnOtherRanks) {
  // Every rank shares a buffer (on a simulated device, so rows travel through the memory layer),
  // writes rows of its right neighbour's and reads rows of its left neighbour's.
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  auto devices = tessera::DeviceSet::select("sim:1:64MiB");
  tessera::MemoryManager memory(devices);
  const std::size_t rows = 64, width = 4;  // 4 floats a row
  tessera::Buffer mine(memory, rows, width * sizeof(float), "rows-of-" + std::to_string(r));
  {
    auto* h = static_cast<float*>(mine.request(tessera::Access::write).get());
    for (std::size_t i = 0; i < rows * width; ++i) h[i] = static_cast<float>(r * 10000 + static_cast<int>(i));
    mine.release(tessera::Access::write);
  }
  td::Objects objects(comm);
  objects.share(td::ObjectName{static_cast<std::uint64_t>(500 + r)}, mine);
  objects.wait();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  // Put rows [8, 16) of the right neighbour's buffer: the value -(r + 1) everywhere.
  std::vector<float> values(8 * width, -static_cast<float>(r + 1));
  auto put = objects.put(td::ObjectName{static_cast<std::uint64_t>(500 + right)}, {8, 16},
                         std::as_bytes(std::span<const float>(values)));
  put.get();
  objects.wait();  // every rank's put is in
  auto got = objects.get(td::ObjectName{static_cast<std::uint64_t>(500 + left)}, {0, 16}).get();
  ASSERT_EQ(got.size(), 16 * width * sizeof(float));
  std::vector<float> read(16 * width);
  std::memcpy(read.data(), got.data(), got.size());
  for (std::size_t i = 0; i < 8 * width; ++i)
    ASSERT_EQ(read[i], static_cast<float>(left * 10000 + static_cast<int>(i)));
  const int writer_of_left = (left + n - 1) % n;
  for (std::size_t i = 8 * width; i < 16 * width; ++i) ASSERT_EQ(read[i], -static_cast<float>(writer_of_left + 1));
  // Bad rows come back as the target's error.
  try {
    objects
        .put(td::ObjectName{static_cast<std::uint64_t>(500 + right)}, {60, 70},
             std::as_bytes(std::span<const float>(values)))
        .get();
    FAIL() << "a put past the end was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rows [60, 70)"), std::string::npos) << e.what();
  }
  try {
    objects
        .put(td::ObjectName{static_cast<std::uint64_t>(500 + right)}, {0, 4},
             std::as_bytes(std::span<const float>(values)))
        .get();
    FAIL() << "a put of the wrong size was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("which hold 64 B"), std::string::npos) << e.what();
  }
  EXPECT_THROW(objects.share(td::ObjectName{std::uint64_t{1} << 63}, mine), tessera::Error);
  // A shared buffer is pinned: asking it to move leaves it where it is.
  objects.migrate(td::ObjectName{static_cast<std::uint64_t>(500 + r)}, right);
  objects.wait();
  EXPECT_TRUE(objects.is_local(td::ObjectName{static_cast<std::uint64_t>(500 + r)}));
}
