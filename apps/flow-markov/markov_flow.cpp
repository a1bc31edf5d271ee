#include "markov_flow.hpp"

#include <tessera/core/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>

extern "C" void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr,
                       double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr, double* work,
                       const int* lwork, int* info);

namespace markov {

std::vector<double> random_transition_matrix(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> p(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    double row = 0;
    for (std::size_t j = 0; j < n; ++j) {
      // Sparse-ish rows with a few strong links make the chain mix at different speeds per seed.
      const double w = u(rng);
      p[i * n + j] = w * w * w * w;
      row += p[i * n + j];
    }
    for (std::size_t j = 0; j < n; ++j) p[i * n + j] /= row;
  }
  return p;
}

std::vector<double> transpose(const std::vector<double>& p, std::size_t n) {
  std::vector<double> t(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) t[j * n + i] = p[i * n + j];
  return t;
}

std::vector<double> stationary_by_eigensolver(const std::vector<double>& p, std::size_t n) {
  // LAPACK is column-major: the row-major array of P reads as P^T, whose right eigenvector for
  // eigenvalue 1 is the stationary distribution.
  std::vector<double> a = p, wr(n), wi(n), vr(n * n);
  const int ni = static_cast<int>(n), one = 1;
  int info = 0, lwork = -1;
  double query = 0;
  dgeev_("N", "V", &ni, a.data(), &ni, wr.data(), wi.data(), nullptr, &one, vr.data(), &ni, &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeev_("N", "V", &ni, a.data(), &ni, wr.data(), wi.data(), nullptr, &one, vr.data(), &ni, work.data(), &lwork, &info);
  if (info != 0) throw tessera::Error(fmt::format("markov: LAPACK dgeev failed (info {})", info));
  std::size_t best = 0;
  for (std::size_t k = 1; k < n; ++k)
    if (std::abs(std::complex<double>(wr[k] - 1, wi[k])) < std::abs(std::complex<double>(wr[best] - 1, wi[best])))
      best = k;
  std::vector<double> pi(vr.begin() + static_cast<std::ptrdiff_t>(best * n),
                         vr.begin() + static_cast<std::ptrdiff_t>((best + 1) * n));
  double sum = 0;
  for (double x : pi) sum += x;
  for (double& x : pi) x /= sum;
  return pi;
}

namespace {

double l1_change(const State& a, const State& b) {
  const auto x = std::get<1>(a).to_vector(), y = std::get<1>(b).to_vector();
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d += std::abs(x[i] - y[i]);
  return d;
}

}  // namespace

SteadyStateFlow::SteadyStateFlow(flow::Flow& f, double threshold, std::size_t max_iterations)
    : approximator_(f.add<flow::Approximator<State>>("steady state", l1_change, threshold, max_iterations)) {
  auto& split = f.add<flow::Splitter<flow::Matrix<double>, flow::Vector<double>>>("split");
  auto& step = f.add<flow::MatrixVectorProduct<double>>("step");
  auto& merge = f.add<flow::Merger<flow::Matrix<double>, flow::Vector<double>>>("merge");
  flow::connect(approximator_.iterate, split.input);
  flow::connect(split.first, step.left);
  flow::connect(split.first, merge.first);
  flow::connect(split.second, step.right);
  flow::connect(step.output, merge.second);
  flow::connect(merge.output, approximator_.feedback);
}

}  // namespace markov
