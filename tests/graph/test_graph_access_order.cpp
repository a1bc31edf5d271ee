// Graph nodes ordered by their declared accesses (the data layer's AccessOrder), beside Ripple's
// level rules: readers of one block run together, conflicting nodes of one level run in the
// order they were added, and a random program of splits and reductions, placed in levels at
// random, leaves what running its operations one by one leaves. On host, sim:1 and sim:4.

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

namespace {

using namespace tessera;
using tensor_test::OnDevices;
using Value = std::uint64_t;

class GraphAccessOrder : public OnDevices {
 protected:
  std::size_t parts() const { return accelerators() > 0 ? accelerators() : 4; }
  Executor ex;
};

// Two splits of one level that only read one host tensor: each kernel waits (bounded) for the
// other to start, so they meet only if they overlap. Before one access model, the second
// node's host hold was refused ("the host already holds").
TEST(GraphAccessOrderHost, TwoReadersOfOneHostTensorInOneLevelRunConcurrently) {
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  ExecutorOptions options;
  options.cpu_workers = 2;
  Executor ex(options);
  Tensor<float, 1> u(memory, Extent<1>{1}, TensorOptions<1>{}.named("u"));
  std::vector<float> one{1.0f};
  u.fill_from(one.data());

  std::atomic<int> started{0}, met{0};
  auto reader = [&started, &met](auto x) {
    started.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    if (started.load() >= 2 && *x == 1.0f) met.fetch_add(1);
  };
  Graph g("readers");
  g.split(reader, read_only(u)).split(reader, read_only(u));
  ASSERT_EQ(g.pass(0).node(1).num_predecessors(), 0u) << "readers of one block need no edge";
  g.run(ex).get();
  EXPECT_EQ(met.load(), 2) << "the two readers did not run at the same time";
}

// Two writers of one tensor in one level: the second follows the first, on every backend.
TEST_P(GraphAccessOrder, ConflictingSplitsInOneLevelRunInTheOrderAdded) {
  TensorOptions<1> o;
  o.partitions = Extent<1>{parts()};
  Tensor<Value, 1> u(memory(), Extent<1>{100}, o.named("u"));
  std::vector<Value> init(100);
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = i;
  u.fill_from(init.data());
  // DOC access-order begin
  tessera::Graph g("writers");
  g.split([] TESSERA_HOST_DEVICE(auto x) { *x = *x + 1; }, u)      // one level: the second
      .split([] TESSERA_HOST_DEVICE(auto x) { *x = *x * 2; }, u);  // runs after the first
  g.run_n(ex, 3).get();
  // DOC access-order end
  EXPECT_EQ(g.pass(0).size(), 2 * parts());
  std::vector<Value> got(100);
  u.gather_to(got.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    Value want = i;
    for (int r = 0; r < 3; ++r) want = (want + 1) * 2;
    ASSERT_EQ(got[i], want) << "site " << i;
  }
}

// A random program: each operation updates one tensor from another (plain, read_only and
// write_only arguments) or sums one into a result, added to the current level or as a new one
// at random. Run twice, it must leave exactly what the sequential interpreter leaves.
struct Operation {
  enum Kind { mix, overwrite, bump, sum } kind;
  std::size_t dst, src;
  Value k;
};

TEST_P(GraphAccessOrder, RandomProgramsMatchASequentialInterpreter) {
  constexpr std::size_t n = 96, tensors = 3;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    TensorOptions<1> o;
    o.partitions = Extent<1>{parts()};
    std::deque<Tensor<Value, 1>> t;
    std::vector<std::vector<Value>> model(tensors, std::vector<Value>(n));
    for (std::size_t k = 0; k < tensors; ++k) {
      t.emplace_back(memory(), Extent<1>{n}, o.named("t" + std::to_string(k)));
      for (std::size_t i = 0; i < n; ++i) model[k][i] = 1000 * k + i;
      t[k].fill_from(model[k].data());
    }
    std::vector<Operation> program;
    std::deque<ReductionResult<Value>> sums;
    Graph g("random " + std::to_string(seed));
    for (int step = 0; step < 24; ++step) {
      Operation op{static_cast<Operation::Kind>(rng() % 4), rng() % tensors, 0, rng() % 1000};
      op.src = (op.dst + 1 + rng() % (tensors - 1)) % tensors;
      const bool new_level = rng() % 3 == 0;
      Tensor<Value, 1>& d = t[op.dst];
      Tensor<Value, 1>& s = t[op.src];
      switch (op.kind) {
        case Operation::mix: {
          auto f = [] TESSERA_HOST_DEVICE(auto x, auto y, Value k) { *x = *x * 3 + *y + k; };
          new_level ? g.then_split(f, d, read_only(s), op.k) : g.split(f, d, read_only(s), op.k);
          break;
        }
        case Operation::overwrite: {
          auto f = [] TESSERA_HOST_DEVICE(auto x, auto y, Value k) { *x = *y * 2 + k; };
          new_level ? g.then_split(f, write_only(d), read_only(s), op.k) : g.split(f, write_only(d), read_only(s), op.k);
          break;
        }
        case Operation::bump: {
          auto f = [] TESSERA_HOST_DEVICE(auto x, Value k) { *x = *x + k; };
          new_level ? g.then_split(f, d, op.k) : g.split(f, d, op.k);
          break;
        }
        case Operation::sum:
          sums.emplace_back();
          new_level ? g.then_reduce(s, sums.back(), Sum{}) : g.reduce(s, sums.back(), Sum{});
          break;
      }
      program.push_back(op);
    }
    for (int run = 0; run < 2; ++run) {
      g.run(ex).get();
      std::vector<Value> want_sums;
      for (const Operation& op : program) {
        std::vector<Value>& x = model[op.dst];
        const std::vector<Value>& y = model[op.src];
        switch (op.kind) {
          case Operation::mix:
            for (std::size_t i = 0; i < n; ++i) x[i] = x[i] * 3 + y[i] + op.k;
            break;
          case Operation::overwrite:
            for (std::size_t i = 0; i < n; ++i) x[i] = y[i] * 2 + op.k;
            break;
          case Operation::bump:
            for (std::size_t i = 0; i < n; ++i) x[i] += op.k;
            break;
          case Operation::sum: {
            Value total = 0;
            for (Value v : y) total += v;
            want_sums.push_back(total);
            break;
          }
        }
      }
      for (std::size_t k = 0; k < tensors; ++k) {
        std::vector<Value> got(n);
        t[k].gather_to(got.data());
        ASSERT_EQ(got, model[k]) << "seed " << seed << ", run " << run << ", tensor t" << k;
      }
      ASSERT_EQ(want_sums.size(), sums.size());
      for (std::size_t r = 0; r < sums.size(); ++r) {
        ASSERT_TRUE(sums[r].is_complete());
        EXPECT_EQ(sums[r].value(), want_sums[r]) << "seed " << seed << ", run " << run << ", sum " << r;
      }
    }
  }
}

TENSOR_TEST_ON_DEVICES(GraphAccessOrder);

}  // namespace
