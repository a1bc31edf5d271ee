// AccessGraph, the extension API for front ends: nodes that declare their Buffer accesses get
// their edges from the data layer's AccessOrder and their data where they run. Random programs
// of host and device nodes over row ranges of a few buffers, run twice, must leave exactly what
// a sequential interpreter leaves, on host, sim:1 and sim:4; and every bad declaration is a
// tessera::Error naming the graph, the node and the buffer.

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/exec/access_graph.hpp>
#include <tessera/memory/buffer.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/sched/node_graph.hpp>

#include <gtest/gtest.h>

#include "../support/backends.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace tessera;
using Value = std::uint64_t;

constexpr std::size_t kBuffers = 3, kRows = 16, kWidth = 4;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no tessera::Error)";
}

// One node: sources' declared rows summed into a seed, written over the destination's rows
// (mixing in the old values for read_write).
struct Step {
  std::size_t dst;
  RowRange out;
  Access mode;
  std::vector<std::pair<std::size_t, RowRange>> sources;
  Value seed;
};

Value source_total(const Step& s, const std::vector<const Value*>& src) {
  Value total = s.seed;
  for (std::size_t k = 0; k < s.sources.size(); ++k)
    for (std::size_t r = s.sources[k].second.begin; r < s.sources[k].second.end; ++r)
      for (std::size_t w = 0; w < kWidth; ++w) total = total * 31 + src[k][r * kWidth + w];
  return total;
}

void apply(const Step& s, Value* dst, const std::vector<const Value*>& src) {
  const Value total = source_total(s, src);
  for (std::size_t r = s.out.begin; r < s.out.end; ++r)
    for (std::size_t w = 0; w < kWidth; ++w) {
      Value& x = dst[r * kWidth + w];
      x = (s.mode == Access::read_write ? x * 3 : 0) + total + r * kWidth + w;
    }
}

RowRange random_rows(std::mt19937& rng) {
  std::size_t a = rng() % kRows, b = rng() % kRows;
  if (a > b) std::swap(a, b);
  return {a, b + 1};
}

class AccessGraphTest : public ::testing::TestWithParam<const char*> {
 protected:
  DeviceSet devices = DeviceSet::select(GetParam());
  MemoryManager memory{devices};
  Executor ex;
};

TEST_P(AccessGraphTest, RandomProgramsMatchASequentialInterpreter) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Buffer> buffers;
    std::vector<std::vector<Value>> model(kBuffers, std::vector<Value>(kRows * kWidth));
    for (std::size_t b = 0; b < kBuffers; ++b) {
      buffers.emplace_back(memory, kRows, kWidth * sizeof(Value), "b" + std::to_string(b));
      for (std::size_t i = 0; i < model[b].size(); ++i) model[b][i] = 1000 * b + i;
      std::memcpy(buffers[b].request(Access::write).get(), model[b].data(), model[b].size() * sizeof(Value));
      buffers[b].release();
    }
    std::vector<Step> program;
    AccessGraph g(memory, "random " + std::to_string(seed));
    for (int i = 0; i < 30; ++i) {
      Step s{rng() % kBuffers, random_rows(rng), rng() % 2 ? Access::write : Access::read_write, {}, rng()};
      const std::size_t n_sources = rng() % 3;
      for (std::size_t k = 0; k < n_sources; ++k) s.sources.emplace_back((s.dst + 1 + k) % kBuffers, random_rows(rng));
      std::vector<BufferAccess> accesses{{buffers[s.dst], s.mode, s.out}};
      for (const auto& [b, rows] : s.sources) accesses.push_back({buffers[b], Access::read, rows});
      const std::string name = "step " + std::to_string(i);
      // Host nodes, and device nodes on a random device's stream (the host's own stream on host).
      if (rng() % 2 == 0) {
        g.host(name, accesses, [s](const NodeData& d) {
          std::vector<const Value*> src;
          for (std::size_t k = 0; k < s.sources.size(); ++k) src.push_back(d.data<Value>(k + 1));
          apply(s, d.data<Value>(0), src);
        });
      } else {
        Device& device = devices.num_accelerators() > 0 ? devices.accelerator(rng() % devices.num_accelerators())
                                                        : devices.host();
        g.device(device, name, accesses, [s](const NodeData& d) {
          std::vector<const Value*> src;
          for (std::size_t k = 0; k < s.sources.size(); ++k) src.push_back(d.data<Value>(k + 1));
          d.stream().enqueue_host([s, dst = d.data<Value>(0), src] { apply(s, dst, src); }, "step");
        }, rng());
      }
      program.push_back(s);
    }
    for (int run = 0; run < 2; ++run) {
      g.run(ex).get();
      for (const Step& s : program) {
        std::vector<const Value*> src;
        for (const auto& [b, rows] : s.sources) src.push_back(model[b].data());
        apply(s, model[s.dst].data(), src);
      }
      for (std::size_t b = 0; b < kBuffers; ++b) {
        std::vector<Value> got(kRows * kWidth);
        std::memcpy(got.data(), buffers[b].request(Access::read).get(), got.size() * sizeof(Value));
        buffers[b].release();
        ASSERT_EQ(got, model[b]) << GetParam() << " seed " << seed << " run " << run << " buffer b" << b;
      }
    }
  }
}

TEST_P(AccessGraphTest, DocumentedExample) {
  Buffer u(memory, 8, sizeof(double), "u");
  Buffer total(memory, 1, sizeof(double), "total");
  Device& device = devices.num_accelerators() > 0 ? devices.accelerator(0) : devices.host();
  // DOC access-graph begin
  tessera::AccessGraph g(memory, "fill, scale, sum");
  g.host("fill", {{u, tessera::Access::write}}, [](const tessera::NodeData& d) {
    for (int i = 0; i < 8; ++i) d.data<double>(0)[i] = i;
  });
  g.host("scale", {{u, tessera::Access::read_write, tessera::RowRange{4, 8}}}, [](const tessera::NodeData& d) {
    for (int i = 4; i < 8; ++i) d.data<double>(0)[i] *= 10;
  });
  g.device(device, "sum", {{u, tessera::Access::read}, {total, tessera::Access::write}},
           [](const tessera::NodeData& d) {
             d.stream().enqueue_host([x = d.data<double>(0), t = d.data<double>(1)] {
               *t = 0;
               for (int i = 0; i < 8; ++i) *t += x[i];
             });
           });
  g.run(ex).get();  // sum follows scale follows fill: 0+1+2+3 + 10*(4+5+6+7) = 226
  // DOC access-graph end
  EXPECT_EQ(*static_cast<const double*>(total.request(Access::read).get()), 226.0);
  total.release();
  EXPECT_EQ(g.nodes().node(1).num_predecessors(), 1u);
  EXPECT_EQ(g.nodes().node(2).num_predecessors(), 2u) << "sum reads rows fill wrote and rows scale wrote";
}

// Readers of one buffer get no edge between them; a writer after them follows both.
TEST_P(AccessGraphTest, ReadersGetNoEdgeAWriterFollowsThem) {
  Buffer u(memory, 4, sizeof(Value), "u");
  AccessGraph g(memory, "readers");
  auto nothing = [](const NodeData&) {};
  g.host("w", {{u, Access::write}}, nothing);
  g.host("r1", {{u, Access::read}}, nothing);
  g.host("r2", {{u, Access::read, RowRange{1, 3}}}, nothing);
  g.host("w2", {{u, Access::write, RowRange{3, 4}}}, nothing);
  EXPECT_EQ(g.nodes().node(1).num_predecessors(), 1u);
  EXPECT_EQ(g.nodes().node(2).num_predecessors(), 1u);
  EXPECT_EQ(g.nodes().node(3).num_predecessors(), 1u) << "w2's rows were read by r1 only";
  EXPECT_NO_THROW(g.run_n(ex, 3).get());
}

TEST_P(AccessGraphTest, BadDeclarationsAreErrors) {
  Buffer u(memory, 4, sizeof(Value), "u");
  AccessGraph g(memory, "bad");
  auto nothing = [](const NodeData&) {};
  auto expect = [](const std::string& what, std::initializer_list<const char*> parts) {
    for (const char* p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << "\n  lacks: " << p;
  };
  expect(message_of([&] { g.host("empty", {{u, Access::write}}, NodeBody{}); }),
         {"AccessGraph 'bad'", "node 'empty'", "body is empty"});
  expect(message_of([&] { g.host("past", {{u, Access::read, RowRange{2, 9}}}, nothing); }),
         {"node 'past'", "rows [2,9)", "buffer 'u'", "rows [0,4)"});
  expect(message_of([&] { g.host("twice", {{u, Access::read, RowRange{0, 2}}, {u, Access::write, RowRange{1, 3}}}, nothing); }),
         {"node 'twice'", "buffer 'u' twice", "read_write"});
  auto others = DeviceSet::select("sim:1:16MiB");
  expect(message_of([&] { g.on(others.accelerator(0).compute_stream(0), "elsewhere", {{u, Access::read}}, nothing); }),
         {"not one of this memory manager's devices"});
  EXPECT_EQ(g.size(), 0u) << "a refused node is not added";
  // Reading rows never written fails the run with the Buffer's error, and the graph stays usable.
  g.host("reads nothing written", {{u, Access::read}}, nothing);
  expect(message_of([&] { g.run(ex).get(); }), {"Buffer 'u'", "never written"});
  AccessGraph h(memory, "streamless");
  h.host("asks", {{u, Access::write}}, [](const NodeData& d) { (void)d.stream(); });
  expect(message_of([&] { h.run(ex).get(); }), {"node 'asks'", "runs on the host and has no stream"});
  h.host("then writes", {{u, Access::write}}, [](const NodeData& d) { d.data<Value>(0)[0] = 1; });
  expect(message_of([&] { h.run(ex).get(); }), {"node 'asks'"});
  AccessGraph k(memory, "fine");
  k.host("writes", {{u, Access::write}}, [](const NodeData& d) { std::memset(d.base(0), 0, 4 * sizeof(Value)); });
  EXPECT_NO_THROW(k.run(ex).get()) << "the failed runs left u's host holds released";
  expect(message_of([&] {
           AccessGraph m(memory, "index");
           m.host("n", {{u, Access::read}}, [](const NodeData& d) { (void)d.base(1); });
           m.run(ex).get();
         }),
         {"node 'n' asked for buffer 1 but declared 1"});
}

INSTANTIATE_TEST_SUITE_P(Backends, AccessGraphTest, ::testing::ValuesIn(test_backends::specs),
                         [](const auto& p) { return test_backends::name(p.param); });

}  // namespace
