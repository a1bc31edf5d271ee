#include "balancer.hpp"

#include <tessera/core/error.hpp>
#include <tessera/core/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tessera::loops::detail {

Balancer::Balancer(std::vector<std::string> participants, double rate, double threshold)
    : participants_(std::move(participants)), rate_(rate), threshold_(threshold) {
  if (!(rate > 0.0 && rate <= 1.0))
    throw Error("loops::ContextOptions: balance_rate " + std::to_string(rate) + " must be above 0 and at most 1");
  if (!(threshold >= 0.0 && threshold < 1.0))
    throw Error("loops::ContextOptions: balance_threshold " + std::to_string(threshold) +
                " must be at least 0 and below 1");
}

std::vector<int> Balancer::ideal(const LoopBalance& loop, int rows) const {
  const std::size_t n = participants_.size();
  std::vector<double> weight(n, 1.0);
  const bool measured =
      std::all_of(loop.seconds_per_row.begin(), loop.seconds_per_row.end(), [](double s) { return s > 0; });
  if (measured)
    for (std::size_t p = 0; p < n; ++p) weight[p] = 1.0 / loop.seconds_per_row[p];
  double total = 0;
  for (double w : weight) total += w;
  std::vector<int> out(n, 0);
  std::vector<std::pair<double, std::size_t>> remainder;
  int given = 0;
  for (std::size_t p = 0; p < n; ++p) {
    const double exact = rows * weight[p] / total;
    out[p] = int(std::floor(exact));
    given += out[p];
    remainder.emplace_back(exact - out[p], p);
  }
  // Largest remainders first; ties to the earlier participant, so splits are reproducible.
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < rows; ++k, ++given) ++out[remainder[k % n].second];
  // Every participant keeps a row where there are enough, so that it is measured again.
  if (rows >= int(n))
    for (std::size_t p = 0; p < n; ++p)
      if (out[p] == 0) {
        --*std::max_element(out.begin(), out.end());
        out[p] = 1;
      }
  return out;
}

const std::vector<int>& Balancer::split(const std::string& key, int rows) {
  LoopBalance& loop = loops_[key];
  if (loop.seconds_per_row.empty()) loop.seconds_per_row.assign(participants_.size(), 0.0);
  std::vector<int> next = ideal(loop, rows);
  bool change = loop.rows != rows || loop.split.empty();
  if (!change) {
    // Moving rows costs copies and a new graph: only when the predicted finish (the slowest
    // participant) comes `threshold_` sooner.
    auto finish = [&](const std::vector<int>& split) {
      double t = 0;
      for (std::size_t p = 0; p < split.size(); ++p) t = std::max(t, split[p] * loop.seconds_per_row[p]);
      return t;
    };
    const bool measured =
        std::all_of(loop.seconds_per_row.begin(), loop.seconds_per_row.end(), [](double s) { return s > 0; });
    change = measured && next != loop.split && finish(next) <= (1.0 - threshold_) * finish(loop.split);
  }
  if (change) {
    loop.split = std::move(next);
    loop.rows = rows;
    std::string what = key + ":";
    for (std::size_t p = 0; p < participants_.size(); ++p)
      what += (p ? ", " : " ") + participants_[p] + " " + std::to_string(loop.split[p]);
    trace_mark("loops balance", what + " rows");
  }
  return loop.split;
}

void Balancer::measured(const std::string& key, const std::vector<int>& rows, const std::vector<double>& seconds) {
  // A part that ran for less than this is mostly launch cost and timer noise: such a loop keeps
  // its split rather than chase the noise (and rebuild the chain's graph for it).
  constexpr double shortest_measured = 50e-6;
  for (std::size_t p = 0; p < participants_.size(); ++p)
    if (rows[p] > 0 && seconds[p] < shortest_measured) return;
  LoopBalance& loop = loops_[key];
  if (loop.seconds_per_row.empty()) loop.seconds_per_row.assign(participants_.size(), 0.0);
  for (std::size_t p = 0; p < participants_.size(); ++p) {
    if (rows[p] <= 0 || !(seconds[p] > 0)) continue;
    const double s = seconds[p] / rows[p];
    double& avg = loop.seconds_per_row[p];
    avg = avg > 0 ? (1.0 - rate_) * avg + rate_ * s : s;
  }
}

bool Balancer::has_rates(const std::string& key) const {
  const auto it = loops_.find(key);
  return it != loops_.end() && !it->second.seconds_per_row.empty() &&
         std::all_of(it->second.seconds_per_row.begin(), it->second.seconds_per_row.end(),
                     [](double s) { return s > 0; });
}

std::vector<int> Balancer::last_split(const std::string& key) const {
  const auto it = loops_.find(key);
  return it == loops_.end() ? std::vector<int>{} : it->second.split;
}

}  // namespace tessera::loops::detail
