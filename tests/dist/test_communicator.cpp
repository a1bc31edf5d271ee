// Point-to-point messages, Buffer rows and graph nodes between ranks, under mpirun -np 2..4.
#include "mpi_test_support.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/node_graph.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace td = tessera::dist;

TEST(DistCommunicator, RingOfValuesArrivesIntact) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  std::vector<double> out(1000), in(1000, -1.0);
  std::iota(out.begin(), out.end(), 1000.0 * r);
  auto rx = comm.recv(std::span<double>(in), (r + n - 1) % n, 3);
  auto tx = comm.send(std::span<const double>(out), (r + 1) % n, 3);
  tx.wait();
  rx.wait();
  EXPECT_EQ(rx.bytes(), in.size() * sizeof(double));
  const int left = (r + n - 1) % n;
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], 1000.0 * left + static_cast<double>(i));
}

// A message shorter than the receive's room: bytes() says what came, whether the waiting
// thread saw it complete (the message came at once) or the progress engine did (it came after
// the wait's spin window).
TEST(DistCommunicator, ShortMessagesReportTheBytesThatCame) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  for (const std::size_t sent : {std::size_t{0}, std::size_t{3}, std::size_t{24}, std::size_t{5000}}) {
    std::vector<std::uint8_t> out(sent, static_cast<std::uint8_t>(r + 1)), in(sent + 77, 0);
    auto rx = comm.recv_bytes(in.data(), in.size(), left, 9);
    comm.send_bytes(out.data(), out.size(), right, 9).wait();
    rx.wait();
    EXPECT_EQ(rx.bytes(), sent) << sent << " bytes sent, room for " << in.size();
    for (std::size_t i = 0; i < sent; ++i) ASSERT_EQ(in[i], static_cast<std::uint8_t>(left + 1));
    for (std::size_t i = sent; i < in.size(); ++i) ASSERT_EQ(in[i], 0) << "written past the message";
  }
  // Completed by the progress engine: the message comes 20 ms late, long after the wait's spin
  // window, so the waiter hands the receive over and sleeps until the progress thread sees it.
  std::vector<std::uint8_t> out(40, static_cast<std::uint8_t>(r + 7)), in(100, 0);
  auto rx = comm.recv_bytes(in.data(), in.size(), left, 10);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    comm.send_bytes(out.data(), out.size(), right, 10).wait();
  });
  rx.wait();
  late.join();
  EXPECT_EQ(rx.bytes(), out.size());
  EXPECT_EQ(in[39], static_cast<std::uint8_t>(left + 7));
  EXPECT_EQ(in[40], 0) << "written past the message";
}

// Copies of one Request waited on in several threads at once: each wait tests it (one at a time)
// until it completes or is handed to the progress engine, once; every waiter returns, with the
// bytes. Once as the message comes at once, once as it comes after the waits' spin.
TEST(DistCommunicator, CopiesOfARequestWaitedOnInSeveralThreads) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  for (const int delay_ms : {0, 20}) {
    std::vector<std::uint8_t> out(16, static_cast<std::uint8_t>(r + 3)), in(32, 0);
    const tessera::dist::Request rx = comm.recv_bytes(in.data(), in.size(), left, 11);
    std::vector<std::thread> waiters;
    std::vector<std::size_t> got(3, 0);
    for (std::size_t t = 0; t < got.size(); ++t)
      waiters.emplace_back([rx, &got, t] {  // a copy each
        rx.wait();
        got[t] = rx.bytes();
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    comm.send_bytes(out.data(), out.size(), right, 11).wait();
    rx.wait();
    for (auto& w : waiters) w.join();
    for (std::size_t t = 0; t < got.size(); ++t)
      EXPECT_EQ(got[t], out.size()) << "waiter " << t << ", " << delay_ms << " ms";
    EXPECT_EQ(in[15], static_cast<std::uint8_t>(left + 3));
    EXPECT_EQ(in[16], 0);
  }
}

TEST(DistCommunicator, GraphNodesExchangeWithoutHoldingWorkers) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  tessera::ExecutorOptions one_worker;  // a receive that held its worker would starve the send
  one_worker.gpu_workers = 1;
  one_worker.cpu_workers = 0;
  tessera::Executor executor(one_worker);
  std::vector<int> out(64, r), in(64, -1);
  int checked = 0;
  tessera::NodeGraph g("exchange");
  auto& rx = comm.recv_node(g, in.data(), in.size() * sizeof(int), (r + n - 1) % n, 4);
  auto& tx = comm.send_node(g, out.data(), out.size() * sizeof(int), (r + 1) % n, 4);
  auto& check = g.emplace([&] { checked = in[0] == (r + n - 1) % n && in[63] == (r + n - 1) % n; });
  rx.precede(check);
  tx.precede(check);
  executor.run(g).get();
  EXPECT_EQ(checked, 1);
}

// A message MPI moves in pieces (4 MiB), received by a graph whose only worker has gone to sleep
// before the sender starts: the progress thread alone moves it, and every value arrives.
TEST(DistCommunicator, GraphNodesStreamALargeMessageWhileNoWorkerIsAwake) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size(), left = (r + n - 1) % n;
  tessera::ExecutorOptions one_worker;
  one_worker.gpu_workers = 1;
  one_worker.cpu_workers = 0;
  tessera::Executor executor(one_worker);
  const std::size_t count = std::size_t{1} << 19;
  std::vector<double> out(count), in(count, -1.0);
  for (std::size_t i = 0; i < count; ++i) out[i] = r * 1e7 + static_cast<double>(i);
  std::size_t wrong = 0;
  tessera::NodeGraph g("stream");
  auto& rx = comm.recv_node(g, in.data(), count * sizeof(double), left, 6);
  auto& late = g.emplace([] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
  auto& tx = comm.send_node(g, out.data(), count * sizeof(double), (r + 1) % n, 6);
  auto& check = g.emplace([&] {
    for (std::size_t i = 0; i < count; ++i) wrong += in[i] != left * 1e7 + static_cast<double>(i);
  });
  late.precede(tx);
  rx.precede(check);
  tx.precede(check);
  executor.run(g).get();
  EXPECT_EQ(wrong, 0u);
}

TEST(DistCommunicator, BufferRowsTravelThroughTheHost) {
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  auto devices = tessera::DeviceSet::select("sim:1");
  tessera::MemoryManager memory(devices);
  tessera::Buffer b(memory, 32, 4 * sizeof(float), "field");
  {
    auto* h = static_cast<float*>(b.request(tessera::Access::write).get());
    for (std::size_t i = 0; i < 32 * 4; ++i) h[i] = static_cast<float>(r * 1000 + static_cast<int>(i));
    b.release(tessera::Access::write);
  }
  // Rows 8..16 go right; rows 0..8 come from the left.
  auto rx = comm.recv(b, {0, 8}, (r + n - 1) % n, 5);
  auto tx = comm.send(b, {8, 16}, (r + 1) % n, 5);
  tx.wait();
  rx.wait();
  auto* h = static_cast<const float*>(b.request(tessera::Access::read).get());
  const int left = (r + n - 1) % n;
  for (std::size_t i = 0; i < 8 * 4; ++i) ASSERT_EQ(h[i], static_cast<float>(left * 1000 + 32 + static_cast<int>(i)));
  for (std::size_t i = 8 * 4; i < 32 * 4; ++i) ASSERT_EQ(h[i], static_cast<float>(r * 1000 + static_cast<int>(i)));
  b.release(tessera::Access::read);
}

TEST(DistCommunicator, BadPeersAndTagsAreErrors) {
  auto& comm = test_comm();
  int x = 0;
  EXPECT_THROW(comm.send(std::span<const int>(&x, 1), comm.size(), 0), tessera::Error);
  EXPECT_THROW(comm.send(std::span<const int>(&x, 1), -2, 0), tessera::Error);
  try {
    comm.send(std::span<const int>(&x, 1), 0, td::Communicator::max_user_tag + 1);
    FAIL() << "a tessera tag was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tag"), std::string::npos) << e.what();
  }
  EXPECT_THROW(td::Request().wait(), tessera::Error);
}

TEST(DistCommunicator, ExecutorOptionsShareTheNodesCoresAmongItsRanks) {
  auto& comm = test_comm();
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(comm.cores_per_rank(), std::max(1u, hw / static_cast<unsigned>(comm.ranks_on_node())));
  const tessera::ExecutorOptions o = comm.executor_options();
  EXPECT_EQ(o.gpu_workers, 1u);
  ASSERT_TRUE(o.cpu_workers.has_value());
  tessera::Executor ex(o);
  EXPECT_EQ(ex.num_workers(), comm.cores_per_rank()) << comm.ranks_on_node() << " ranks on this node of " << hw;
}

TEST(DistCommunicator, BarrierOrdersWritesAcrossRanks) {
  // A value sent before the barrier by every rank is there after it on every rank.
  auto& comm = test_comm();
  const int r = comm.rank(), n = comm.size();
  int token = r * 7, got = -1;
  auto rx = comm.recv(std::span<int>(&got, 1), (r + n - 1) % n, 6);
  auto tx = comm.send(std::span<const int>(&token, 1), (r + 1) % n, 6);
  comm.barrier();
  tx.wait();
  rx.wait();
  EXPECT_EQ(got, ((r + n - 1) % n) * 7);
}
