// Monte Carlo option pricing (apps/flow-options):
//  1. the flow pricer on the host against OpenMpPricer, the same paths by hand in OpenMP loops;
//  2. the flow pricer on two simulated devices against one, several sets in flight, each set
//     kept on one device (Placement::per_input_set).
// Both sides run a fixed number of rounds (tolerance 0) and are timed in interleaved rounds;
// each record is the median. Rates are paths per second over all sets: a ratio above 1 is better.
#include "suites.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "flow-options/option_set.hpp"
#include "flow-options/pricer.hpp"
#include "options_openmp.hpp"

namespace flow_bench {

namespace {

namespace flow = tessera::flow;
using flow_options::MonteCarloPricer;
using flow_options::OptionSet;
using flow_options::SetQuote;

struct Workload {
  std::size_t sets, options, paths_per_round, rounds, reps;

  double paths() const { return static_cast<double>(sets * paths_per_round * rounds); }
  std::string name(const char* what) const {
    return std::string(what) + "-" + std::to_string(sets) + "x" + std::to_string(options);
  }
  flow_options::PricerOptions pricer() const {
    return {.paths_per_round = paths_per_round, .tolerance = 0.0, .max_rounds = rounds, .seed = 2024};
  }
};

template <typename F>
double seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The largest gap between two pricers' prices, in standard errors: the sums differ only in the
// order of their additions, so anything above 1e-6 means they did not price the same paths.
double largest_gap(const std::vector<SetQuote>& a, const std::vector<SetQuote>& b) {
  double worst = 0;
  for (std::size_t s = 0; s < a.size(); ++s)
    for (std::size_t k = 0; k < a[s].prices.size(); ++k)
      worst = std::max(worst, std::abs(a[s].prices[k] - b[s].prices[k]) / a[s].standard_errors[k]);
  return worst;
}

void host_against_openmp(tessera::bench::Report& report, const Workload& w) {
  const std::vector<OptionSet> sets = flow_options::example_sets(w.sets, w.options);
  auto host = tessera::DeviceSet::select("host");
  flow::FlowOptions on_host;
  on_host.placement = flow::Placement::host;
  MonteCarloPricer pricer(host, w.pricer(), on_host);
  OpenMpPricer openmp(w.paths_per_round, w.sets, w.options);

  std::vector<SetQuote> flow_quotes = pricer.price(sets);  // also the warm-up
  openmp.run(sets, w.rounds, w.pricer().seed);
  const double gap = largest_gap(flow_quotes, openmp.quotes(sets));
  if (!(gap < 1e-6)) std::printf("warning: the OpenMP pricer's prices are %.3g standard errors off the flow's\n", gap);

  std::vector<double> flow_times, openmp_times;
  for (std::size_t rep = 0; rep < w.reps; ++rep) {
    auto time_flow = [&] { flow_times.push_back(seconds_of([&] { flow_quotes = pricer.price(sets); })); };
    auto time_openmp = [&] { openmp_times.push_back(seconds_of([&] { openmp.run(sets, w.rounds, 2024); })); };
    if (rep % 2 == 0)
      time_flow(), time_openmp();
    else
      time_openmp(), time_flow();
  }
  const double flow_rate = w.paths() / median(flow_times) * 1e-6;
  const double openmp_rate = w.paths() / median(openmp_times) * 1e-6;
  const std::string name = w.name("options-host");
  report.add({name, "tessera-flow", "paths/s", flow_rate, "M/s", OpenMpPricer::has_openmp() ? "openmp" : "serial loop",
              openmp_rate});
  report.add({name, "flow-vs-openmp", "max-gap", gap, "stderr"});
}

// A pricer on simulated devices, every set kept on one device, on an executor with the default
// workers for them (a GPU-priority worker per device, plus one).
tessera::ExecutorOptions default_workers(const tessera::DeviceSet& devices) {
  tessera::ExecutorOptions o;
  o.num_devices = devices.num_accelerators();
  return o;
}

struct SimPricer {
  SimPricer(tessera::DeviceSet devices, const Workload& w)
      : set(std::move(devices)), executor(default_workers(set)), pricer(set, w.pricer(), per_input_set(executor)) {}
  static flow::FlowOptions per_input_set(tessera::Executor& executor) {
    flow::FlowOptions o;
    o.placement = flow::Placement::per_input_set;
    o.executor = &executor;
    return o;
  }
  tessera::DeviceSet set;
  tessera::Executor executor;
  MonteCarloPricer pricer;
  std::vector<SetQuote> quotes;
  std::vector<double> times;
};

tessera::DeviceSet one_stream_devices(std::size_t count) {
  tessera::SimOptions o;
  o.compute_streams = 1;
  return tessera::DeviceSet::simulated(count, o);
}

// `one` and `two` hold one and two devices; a record of two's rate against one's.
void time_two_against_one(tessera::bench::Report& report, const Workload& w, const std::string& name,
                          const std::string& label, SimPricer& one, SimPricer& two) {
  const std::vector<OptionSet> sets = flow_options::example_sets(w.sets, w.options);
  one.pricer.price(sets);  // warm-up: first touch of the devices' memory
  two.pricer.price(sets);
  auto time = [&](SimPricer& p) { p.times.push_back(seconds_of([&] { p.quotes = p.pricer.price(sets); })); };
  for (std::size_t rep = 0; rep < w.reps; ++rep) {
    if (rep % 2 == 0)
      time(one), time(two);
    else
      time(two), time(one);
  }
  if (largest_gap(one.quotes, two.quotes) != 0.0)
    std::printf("warning: one and two simulated devices gave different prices\n");
  report.add({w.name(name.c_str()), "sim:2" + label + " per_input_set", "paths/s", w.paths() / median(two.times) * 1e-6,
              "M/s", "sim:1" + label + " per_input_set", w.paths() / median(one.times) * 1e-6});
}

// With one stream per device a simulated device is one thread, so two of them can use the two
// cores of a small machine and one cannot: the record that shows placement scaling. With the
// default two streams (DeviceSet::select("sim:N")) one device already keeps two cores busy.
void two_devices_against_one(tessera::bench::Report& report, const Workload& w) {
  {
    SimPricer one(one_stream_devices(1), w), two(one_stream_devices(2), w);
    time_two_against_one(report, w, "options-sim", " 1-stream", one, two);
  }
  SimPricer one(tessera::DeviceSet::select("sim:1"), w), two(tessera::DeviceSet::select("sim:2"), w);
  time_two_against_one(report, w, "options-sim-select", "", one, two);
}

}  // namespace

void options(tessera::bench::Report& report, const Options& o) {
  const Workload host{.sets = 4,
                      .options = 64,
                      .paths_per_round = std::size_t{1} << 17,
                      .rounds = o.quick ? 2u : 8u,
                      .reps = o.quick ? 3u : 7u};
  host_against_openmp(report, host);
  const Workload sim{.sets = 8,
                     .options = 64,
                     .paths_per_round = std::size_t{1} << 16,
                     .rounds = o.quick ? 3u : 8u,
                     .reps = o.quick ? 3u : 5u};
  two_devices_against_one(report, sim);
}

}  // namespace flow_bench
