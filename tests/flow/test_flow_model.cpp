// The dataflow model: firing rules and the order of values under many concurrent input sets
// (random graphs with random delays against a sequential interpreter), cycles, reference counts,
// lazy copies, placement and the trace.

#include "flow_test_support.hpp"

#include <tessera/core/trace.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace flow = tessera::flow;

namespace {

struct AddOne : flow::Operation {
  flow::InputPort<int> input{*this, "input"};
  flow::OutputPort<int> output{*this, "output"};
  AddOne() : Operation("add one") {}
  void fire(flow::Context& c) override { c.emit(output, c.get(input) + 1); }
};

// out = a * x (+ b * y) + c, mod a prime, after a random delay; concurrent or not.
struct Node : flow::Operation {
  flow::InputPort<long> x{*this, "x"};
  std::unique_ptr<flow::InputPort<long>> y;
  flow::OutputPort<long> output{*this, "output"};
  long a, b, c;
  bool parallel;
  int max_delay_us;
  Node(std::string name, bool two_inputs, long a_, long b_, long c_, bool par, int delay)
      : Operation(std::move(name)), a(a_), b(b_), c(c_), parallel(par), max_delay_us(delay) {
    if (two_inputs) y = std::make_unique<flow::InputPort<long>>(*this, "y");
  }
  bool concurrent() const override { return parallel; }
  static long eval(long a, long b, long c, long xv, long yv) { return (a * xv + b * yv + c) % 1000003; }
  void fire(flow::Context& ctx) override {
    thread_local std::mt19937 rng(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    if (max_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % max_delay_us));
    const long yv = y ? ctx.get(*y) : 0;
    ctx.emit(output, eval(a, b, c, ctx.get(x), yv));
  }
};

}  // namespace

TEST(FlowModel, ChainOfScalars) {
  auto devices = tessera::DeviceSet::select("host");
  flow::Flow f(devices);
  auto& a = f.add<AddOne>();
  auto& b = f.add<AddOne>();
  flow::connect(a.output, b.input);
  std::vector<int> got;
  f.on_receive(b.output, [&](int v) { got.push_back(v); });
  for (int i = 0; i < 100; ++i) f.send(a.input, i);
  f.wait();
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], i + 2);
}

// Random layered graphs: each input fed by one output (fan-out allowed, fan-in is a join of two
// inputs), 200 input sets in flight at once, random delays, concurrent and serial operations.
// Every sink must see, in order, what a sequential interpreter computes set by set.
TEST(FlowModel, RandomGraphsKeepTheOrderOfEveryPath) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    auto devices = tessera::DeviceSet::select("host");
    flow::Flow f(devices);
    struct Spec {
      Node* node;
      int src_x, src_y;  // index of the producing node, or -1 - k for source input k
    };
    std::vector<Spec> nodes;
    const int sources = 3, count = 12 + static_cast<int>(rng() % 10);
    for (int i = 0; i < count; ++i) {
      const bool two = i >= sources && rng() % 2 == 0;
      auto& n = f.add<Node>("n" + std::to_string(i), two, 1 + rng() % 7, 1 + rng() % 5, rng() % 11, rng() % 3 != 0,
                            rng() % 3 == 0 ? 50 : 0);
      Spec s{&n, -1 - i % sources, -1};
      if (i >= sources) {
        s.src_x = static_cast<int>(rng() % i);
        flow::connect(nodes[static_cast<std::size_t>(s.src_x)].node->output, n.x);
        if (two) {
          s.src_y = static_cast<int>(rng() % i);
          flow::connect(nodes[static_cast<std::size_t>(s.src_y)].node->output, *n.y);
        }
      }
      nodes.push_back(s);
    }
    std::vector<std::vector<long>> seen(nodes.size());
    std::vector<std::unique_ptr<std::mutex>> locks;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      locks.push_back(std::make_unique<std::mutex>());
      f.on_receive(nodes[i].node->output, [&, i](long v) {
        std::lock_guard lock(*locks[i]);
        seen[i].push_back(v);
      });
    }
    const int sets = 200;
    std::vector<std::vector<long>> expected(nodes.size());
    for (int s = 0; s < sets; ++s) {
      std::vector<long> value(nodes.size());
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Spec& sp = nodes[i];
        const long xv = sp.src_x < 0 ? s * 31 + (-1 - sp.src_x) : value[static_cast<std::size_t>(sp.src_x)];
        const long yv = sp.src_y < 0 ? 0 : value[static_cast<std::size_t>(sp.src_y)];
        value[i] = Node::eval(sp.node->a, sp.node->b, sp.node->c, xv, yv);
        expected[i].push_back(value[i]);
      }
    }
    for (int s = 0; s < sets; ++s) {
      const auto set = f.new_input_set();
      for (int k = 0; k < sources; ++k) f.send(nodes[static_cast<std::size_t>(k)].node->x, long{s * 31 + k}, set);
    }
    f.wait();
    for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(seen[i], expected[i]) << "seed " << seed << " node " << i;
    EXPECT_GE(f.stats().firings, static_cast<std::size_t>(sets * count));
  }
}

// Newton's iteration for sqrt(a) in a cycle: every input set converges to its own root.
TEST(FlowModel, CyclesTerminateAndKeepInputSetsApart) {
  for (const std::string spec : {"host", "sim:2"}) {
    auto devices = tessera::DeviceSet::select(spec);
    flow::Flow f(devices);
    using Pair = std::tuple<double, double>;  // (a, x)
    auto& approx = f.add<flow::Approximator<Pair>>(
        "newton", [](const Pair& p, const Pair& q) { return std::abs(std::get<1>(p) - std::get<1>(q)); }, 1e-13, 100);
    struct Step : flow::Operation {
      flow::InputPort<Pair> input{*this, "input"};
      flow::OutputPort<Pair> output{*this, "output"};
      Step() : Operation("newton step") {}
      void fire(flow::Context& c) override {
        const auto [a, x] = c.get(input);
        c.emit(output, Pair(a, 0.5 * (x + a / x)));
      }
    };
    auto& step = f.add<Step>();
    flow::connect(approx.iterate, step.input);
    flow::connect(step.output, approx.feedback);
    std::map<double, double> roots;
    std::mutex m;
    f.on_receive(approx.output, [&](const Pair& p) {
      std::lock_guard lock(m);
      roots[std::get<0>(p)] = std::get<1>(p);
    });
    for (int i = 1; i <= 50; ++i) f.send(approx.input, Pair(i * 3.0, 1.0));
    f.wait();
    ASSERT_EQ(roots.size(), 50u) << spec;
    for (const auto& [a, r] : roots) EXPECT_NEAR(r, std::sqrt(a), 1e-12 * std::sqrt(a)) << spec;
  }
}

TEST(FlowModel, ArraysAreFreedAndCopiedAtMostOncePerDevice) {
  auto devices = tessera::DeviceSet::select("sim:2");
  {
    flow::Flow f(devices);
    const std::size_t n = 1 << 16;
    std::vector<double> x(n, 1.5);
    std::vector<flow::Map<double, 1, std::function<double(double)>>*> maps;
    double total = 0;
    std::mutex m;
    for (int k = 0; k < 3; ++k) {
      auto& mp = f.add<flow::Map<double, 1, std::function<double(double)>>>(
          "scale", std::function<double(double)>([k](double v) { return v * (k + 1); }));
      mp.pin(1);  // every reader on sim:0
      f.on_receive(mp.output, [&](const flow::Vector<double>& r) {
        const auto v = r.to_vector();
        std::lock_guard lock(m);
        total += v[0];
      });
      maps.push_back(&mp);
    }
    {
      flow::Vector<double> a(f, x);
      for (auto* mp : maps) f.send(mp->input, a);
      f.wait();
    }
    EXPECT_EQ(total, 1.5 * (1 + 2 + 3));
    // One copy in (the three readers share it), three results back.
    const auto t = f.memory().stats().transferred;
    EXPECT_EQ(t.host_to_device, n * sizeof(double));
    EXPECT_EQ(t.device_to_host, 3 * n * sizeof(double));
    EXPECT_EQ(f.memory().bytes_in_use(2), 0u);
    f.memory().synchronize();
    EXPECT_EQ(f.memory().bytes_in_use(1), 0u) << "every array is gone, so its replicas must be too";
  }
}

TEST(FlowModel, PlacementPolicies) {
  auto devices = tessera::DeviceSet::select("sim:3");
  struct WhereAmI : flow::Operation {
    flow::InputPort<flow::Vector<double>> input{*this, "input"};
    flow::OutputPort<flow::Vector<double>> output{*this, "output"};
    std::mutex m;
    std::map<std::uint64_t, std::set<std::size_t>> spaces;
    WhereAmI() : Operation("where") {}
    void fire(flow::Context& c) override {
      {
        std::lock_guard lock(m);
        spaces[c.input_set()].insert(c.space());
      }
      const auto& x = c.get(input);
      auto y = c.allocate<double>(x.shape());
      double* py = y.data;
      const double* px = c.read(x);
      c.launch("copy", x.size(), [=](std::size_t i) { py[i] = px[i]; });
      c.emit(output, std::move(y.array));
    }
  };
  {
    flow::FlowOptions o;
    o.placement = flow::Placement::per_input_set;
    flow::Flow f(devices, o);
    auto& a = f.add<WhereAmI>();
    auto& b = f.add<WhereAmI>();
    flow::connect(a.output, b.input);
    std::vector<flow::InputSet> sets;
    for (int s = 0; s < 9; ++s) {
      sets.push_back(f.new_input_set());
      f.send(a.input, flow::Vector<double>(f, std::vector<double>(100, s)), sets.back());
    }
    f.wait();
    for (const auto& set : sets) {
      const std::set<std::size_t> want{1 + set.id % 3};
      EXPECT_EQ(a.spaces[set.id], want);
      EXPECT_EQ(b.spaces[set.id], want) << "a whole input set stays on one device";
    }
  }
  {
    flow::Flow f(devices);  // data-affine: b follows a's result
    auto& a = f.add<WhereAmI>();
    auto& b = f.add<WhereAmI>();
    flow::connect(a.output, b.input);
    a.pin(3);
    f.send(a.input, flow::Vector<double>(f, std::vector<double>(1000, 1.0)));
    f.wait();
    ASSERT_EQ(b.spaces.size(), 1u);
    EXPECT_EQ(b.spaces.begin()->second, std::set<std::size_t>{3});
    const auto st = f.stats();
    EXPECT_EQ(st.firings_per_space[3], 2u);
  }
  {
    flow::FlowOptions o;
    o.placement = flow::Placement::host;
    flow::Flow f(devices, o);
    auto& a = f.add<WhereAmI>();
    f.send(a.input, flow::Vector<double>(f, std::vector<double>(10, 1.0)));
    f.wait();
    EXPECT_EQ(a.spaces.begin()->second, std::set<std::size_t>{0});
  }
}

TEST(FlowModel, TraceShowsWhereEachFiringRan) {
  auto devices = tessera::DeviceSet::select("sim:2");
  tessera::Executor ex;
  flow::FlowOptions o;
  o.executor = &ex;
  o.trace_placement = true;
  o.placement = flow::Placement::per_input_set;
  flow::Flow f(devices, o);
  auto& sq = flow::map<double>(f, "square", [](double v) { return v * v; });
  ex.start_trace();
  for (int s = 0; s < 4; ++s) f.send(sq.input, flow::Vector<double>(f, std::vector<double>(10, 2.0)));
  f.wait();
  const tessera::Trace trace = ex.stop_trace();
  int on_sim0 = 0, on_sim1 = 0;
  for (const auto& e : trace.events) {
    if (trace.tracks[e.track] != "flow placement") continue;
    if (e.name.find("square") != std::string::npos && e.name.find("sim:0") != std::string::npos) ++on_sim0;
    if (e.name.find("square") != std::string::npos && e.name.find("sim:1") != std::string::npos) ++on_sim1;
  }
  EXPECT_EQ(on_sim0, 2);
  EXPECT_EQ(on_sim1, 2);
}
