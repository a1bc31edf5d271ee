// tessera-flow-markov [--states N] [--chains K] [--threshold X] [--seed S]
// Steady states of K random Markov chains at once, each an input set circling the same cyclic
// flow (Alea figure 4), checked against LAPACK's eigenvector to 1e-8. Devices: TESSERA_DEVICES.
#include "markov_flow.hpp"

#include <tessera/device/device_set.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tessera-flow-markov: %s\nusage: tessera-flow-markov [--states N] [--chains K] [--threshold X] "
               "[--seed S]\n",
               why);
  std::exit(2);
}

double number(const char* option, const char* text, double min) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || v < min) {
    std::fprintf(stderr, "tessera-flow-markov: %s expects a number >= %g, got '%s'\n", option, min, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t states = 400, chains = 4;
  double threshold = 1e-13;
  std::uint64_t seed = 2026;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") usage("the steady state of Markov chains as a cyclic dataflow");
    if (i + 1 >= argc) usage(("option " + a + " needs a value").c_str());
    const char* v = argv[++i];
    if (a == "--states")
      states = static_cast<std::size_t>(number("--states", v, 2));
    else if (a == "--chains")
      chains = static_cast<std::size_t>(number("--chains", v, 1));
    else if (a == "--threshold")
      threshold = number("--threshold", v, 0);
    else if (a == "--seed")
      seed = static_cast<std::uint64_t>(number("--seed", v, 0));
    else
      usage(("unknown option " + a).c_str());
  }
  try {
    auto devices = tessera::DeviceSet::select();
    std::printf("markov: %zu chains of %zu states on %s, threshold %g (L1 change of v)\n", chains, states,
                devices.spec().empty() ? "host" : devices.spec().c_str(), threshold);
    markov::flow::Flow f(devices);
    markov::SteadyStateFlow steady(f, threshold, 10000);
    std::map<std::uint64_t, std::vector<double>> result;  // by input set
    std::mutex m;
    f.on_receive(steady.output(), [&](const markov::State& s, markov::flow::InputSet set) {
      auto v = std::get<1>(s).to_vector();
      std::lock_guard lock(m);
      result[set.id] = std::move(v);
      std::printf("  a chain converged (%zu of %zu)\n", result.size(), chains);
      std::fflush(stdout);
    });
    std::vector<std::vector<double>> p(chains);
    std::map<std::uint64_t, std::size_t> chain_of_set;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t c = 0; c < chains; ++c) {
      p[c] = markov::random_transition_matrix(states, seed + c);
      markov::flow::Matrix<double> M(f, {states, states}, markov::transpose(p[c], states));
      markov::flow::Vector<double> v0(f, std::vector<double>(states, 1.0 / static_cast<double>(states)));
      const auto set = f.new_input_set();
      chain_of_set[set.id] = c;
      f.send(steady.input(), markov::State(M, v0), set);
    }
    f.wait();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto st = f.stats();
    std::printf("markov: %.3f s, %zu firings, %zu kernels\n", seconds, st.firings, st.kernels);
    // Each result belongs to the input set its chain was sent in.
    double worst = 0;
    std::size_t matched = 0;
    for (const auto& [set, c] : chain_of_set) {
      auto it = result.find(set);
      if (it == result.end()) {
        std::printf("  chain %zu: no result\n", c);
        continue;
      }
      const auto pi = markov::stationary_by_eigensolver(p[c], states);
      double d = 0;
      for (std::size_t i = 0; i < states; ++i) d = std::max(d, std::abs(it->second[i] - pi[i]));
      ++matched;
      worst = std::max(worst, d);
      std::printf("  chain %zu: max |v - pi_lapack| = %.3g\n", c, d);
    }
    const bool pass = matched == chains && worst <= 1e-8;
    std::printf("check: %zu/%zu steady states within 1e-8 of LAPACK's eigenvector (worst %.3g): %s\n", matched, chains,
                worst, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-flow-markov: %s\n", e.what());
    return 1;
  }
}
