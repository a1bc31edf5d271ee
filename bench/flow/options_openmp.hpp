#pragma once
// The baseline of the options benchmark: the flow pricer's work written by hand as OpenMP
// loops. The same paths (Philox normals of the same seed and blocks, flow::philox_value), the
// same terminal prices and payoffs, for a fixed number of rounds; one pass per chunk of paths
// (normals to payoff sums without arrays between), all sets' chunks in one parallel loop per round.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flow-options/option_set.hpp"

namespace flow_bench {

class OpenMpPricer {
 public:
  /// Allocates everything run() needs for up to `max_sets` sets of up to `max_options` options.
  OpenMpPricer(std::size_t paths_per_round, std::size_t max_sets, std::size_t max_options);

  /// Prices `sets` for `rounds` rounds each. Allocates nothing.
  void run(std::span<const flow_options::OptionSet> sets, std::size_t rounds, std::uint64_t seed);
  /// The quotes of the last run() (allocates).
  std::vector<flow_options::SetQuote> quotes(std::span<const flow_options::OptionSet> sets) const;

  /// Whether the file was built with OpenMP (otherwise the loops run on one thread).
  static bool has_openmp() noexcept;

 private:
  std::size_t paths_per_round_, max_sets_, max_options_, chunks_;
  std::size_t rounds_ = 0;
  std::vector<double> chunk_sums_;  // [set][chunk][2 * max_options]
  std::vector<double> totals_;      // [set][2 * max_options]
  std::vector<double> spot_, drift_, diffusion_;
  std::vector<double> strike_, sign_;  // [set][max_options]
};

}  // namespace flow_bench
