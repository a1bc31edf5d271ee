#pragma once
// The benchmark contract: every measurement is a record with its baseline measured in the same
// run; records print as a table and are written as JSON (build/bench/<suite>.json).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace tessera::bench {

struct Record {
  std::string benchmark;  ///< e.g. "chain-100000"
  std::string variant;    ///< what was measured: "tessera", "tbb", ...
  std::string metric;     ///< "per-node", "bandwidth", ...
  double value = 0;
  std::string unit;            ///< "ns", "GB/s", ...
  std::string baseline;        ///< what it is compared with ("" for a baseline itself)
  double baseline_value = 0;
  /// value / baseline_value: below 1 is better for times, above 1 for rates.
  double ratio = 0;
};

class Report {
public:
  explicit Report(std::string suite) : suite_(std::move(suite)) {}

  void add(Record r) {
    if (r.baseline_value != 0) r.ratio = r.value / r.baseline_value;
    std::printf("%-24s %-20s %-12s %12.3f %-6s", r.benchmark.c_str(), r.variant.c_str(), r.metric.c_str(), r.value,
                r.unit.c_str());
    if (!r.baseline.empty())
      std::printf("  vs %-14s %12.3f  ratio %.3f", r.baseline.c_str(), r.baseline_value, r.ratio);
    std::printf("\n");
    std::fflush(stdout);
    records_.push_back(std::move(r));
  }

  void header() const {
    std::printf("%-24s %-20s %-12s %12s %-6s  %s\n", "benchmark", "variant", "metric", "value", "unit",
                "baseline (same run)");
  }

  void write_json(const std::string& path) const {
    if (path.empty()) return;
    std::ofstream out(path);
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return;
    }
    out << "[\n";
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      out << "  {\"suite\": \"" << suite_ << "\", \"benchmark\": \"" << r.benchmark << "\", \"variant\": \"" << r.variant
          << "\", \"metric\": \"" << r.metric << "\", \"value\": " << r.value << ", \"unit\": \"" << r.unit
          << "\", \"baseline\": \"" << r.baseline << "\", \"baseline_value\": " << r.baseline_value
          << ", \"ratio\": " << r.ratio << "}" << (i + 1 < records_.size() ? "," : "") << "\n";
    }
    out << "]\n";
    std::printf("wrote %s\n", path.c_str());
  }

private:
  std::string suite_;
  std::vector<Record> records_;
};

/// Median wall time in seconds of `reps` calls of `f` after one warm-up call.
template <class F>
double median_seconds(F&& f, int reps) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Args {
  std::string json;
  bool quick = false;
  std::string only;  ///< `--only NAME`: run just the benchmark group NAME (each suite lists its groups)

  bool runs(const std::string& group) const { return only.empty() || only == group; }
};

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--json" && i + 1 < argc) a.json = argv[++i];
    else if (s == "--quick") a.quick = true;
    else if (s == "--only" && i + 1 < argc) a.only = argv[++i];
  }
  return a;
}

}  // namespace tessera::bench
