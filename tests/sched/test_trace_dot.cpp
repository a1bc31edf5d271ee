// Traces are valid Chrome trace-event JSON with a track per worker and a slice per node;
// DOT export lists every node and edge.
#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#if defined(TESSERA_TEST_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

using namespace tessera;

TEST(Trace, RecordsEveryNodeOnWorkerTracks) {
  Executor ex;
  NodeGraph g("traced");
  auto& a = g.emplace([] {}).name("load \"input\"");
  auto& b = g.emplace([] {}).name("solve");
  auto& c = g.emplace([] {}).name("write").kind(ExecKind::gpu);
  a.precede(b);
  b.precede(c);
  ex.start_trace();
  ex.run_n(g, 4).get();
  Trace t = ex.stop_trace();
  ASSERT_EQ(t.tracks.size(), ex.num_workers());
  ASSERT_EQ(t.events.size(), 12u);
  std::multiset<std::string> names;
  for (auto& e : t.events) {
    names.insert(e.name);
    EXPECT_LE(e.begin_ns, e.end_ns);
    EXPECT_LT(e.track, t.tracks.size());
  }
  EXPECT_EQ(names.count("solve"), 4u);
  EXPECT_EQ(names.count("load \"input\""), 4u);
  for (auto& e : t.events) {
    if (e.name == "write") {
      EXPECT_EQ(e.category, "gpu");
    }
  }

  std::ostringstream out;
  t.write_chrome_json(out);
#if defined(TESSERA_TEST_HAVE_JSON)
  auto j = nlohmann::json::parse(out.str());
  int slices = 0, metadata = 0;
  for (auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "X") {
      ++slices;
      EXPECT_TRUE(ev.contains("ts") && ev.contains("dur") && ev.contains("tid"));
    }
    if (ev["ph"] == "M") ++metadata;
  }
  EXPECT_EQ(slices, 12);
  EXPECT_EQ(metadata, static_cast<int>(ex.num_workers()));
#else
  EXPECT_NE(out.str().find("\"traceEvents\""), std::string::npos);
#endif

  // Nothing is recorded once tracing stops.
  ex.run(g).get();
  EXPECT_TRUE(ex.stop_trace().events.empty());
}

TEST(Trace, SaveToAnUnwritablePathIsAnError) {
  Trace t;
  try {
    t.save("/nonexistent-dir/x/trace.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x/trace.json"), std::string::npos);
  }
}

TEST(Dot, ListsNodesEdgesAndKinds) {
  NodeGraph g("pipe");
  auto& a = g.emplace([] {}).name("read");
  auto& b = g.emplace([] {}).name("gpu step").kind(ExecKind::gpu);
  auto& c = g.emplace([] {});
  a.precede(b).precede(c);
  b.precede(c);
  std::string dot = g.to_dot();
  EXPECT_NE(dot.find("digraph \"pipe\""), std::string::npos);
  EXPECT_NE(dot.find("n0 [label=\"read\", shape=box]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 [label=\"gpu step\", shape=ellipse"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n2 [label=\"#2\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos);
  EXPECT_NE(dot.find("n0 -> n2;"), std::string::npos);
  EXPECT_NE(dot.find("n1 -> n2;"), std::string::npos);
  EXPECT_EQ(g.find("gpu step"), &b);
  EXPECT_EQ(g.find("missing"), nullptr);
}
