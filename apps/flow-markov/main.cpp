// tessera-flow-markov [--states N] [--chains K] [--threshold X] [--seed S]
// Steady states of K random Markov chains at once, each an input set circling the same cyclic
// flow (Alea figure 4), checked against LAPACK's eigenvector to 1e-8. Devices: TESSERA_DEVICES.
// --help lists the options with their defaults; --config FILE reads them as `states = 120` lines.
#include "markov_flow.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>

int main(int argc, char** argv) {
  std::size_t states = 400, chains = 4;
  double threshold = 1e-13;
  std::uint64_t seed = 2026;
  CLI::App app{"Steady states of random Markov chains as a cyclic dataflow (Alea figure 4), checked against LAPACK",
               "tessera-flow-markov"};
  tessera_app::add_standard_options(app);
  app.add_option("--states", states, "states of each chain")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(2, 1 << 15));
  app.add_option("--chains", chains, "chains in flight at once")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(1, 4096));
  // The L1 distance of two distributions is at most 2.
  app.add_option("--threshold", threshold, "a chain stops once the L1 change of v is at most X")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 2));
  app.add_option("--seed", seed, "seed of the first chain's transition matrix (chain c: S + c)")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
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
