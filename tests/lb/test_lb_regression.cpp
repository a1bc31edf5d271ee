// The regression against Ludwig: serial-spin-lb1 (64^3, periodic, 10 steps) and serial-spin-lb2
// (32^3 with walls on every side, 40 steps), run from Ludwig's own input decks; every number of
// every statistics block must match Ludwig's log (apps/lb/regression/SOURCE.md) to 1e-10
// relative, or to Ludwig's own harness tolerance of 1e-12 absolute for the round-off values
// (momenta near 1e-14; the last digits of a density variance near 1e-10, which is S2/V - mean^2
// with rho ~ 1).

#include "solver.hpp"
#include "statistics.hpp"

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef LB_REGRESSION_DIR
#error "LB_REGRESSION_DIR must name apps/lb/regression"
#endif

namespace {

const char* const tags[] = {"[rho]", "[phi]", "[fed]", "[fe]", "[total", "[fluid", "[walls", "[minimum", "[maximum"};

// The statistics lines of a log, in order.
std::vector<std::string> statistics_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    for (const char* tag : tags)
      if (line.rfind(tag, 0) == 0) {
        lines.push_back(line);
        break;
      }
  return lines;
}

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// Ludwig's token comparison, with the relative bound asked of this solver added.
void expect_same_numbers(const std::string& ours, const std::string& theirs, const std::string& where) {
  const auto a = tokens(ours), b = tokens(theirs);
  ASSERT_EQ(a.size(), b.size()) << where << "\n ours:   " << ours << "\n Ludwig: " << theirs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double x = std::strtod(a[i].c_str(), &end_a), y = std::strtod(b[i].c_str(), &end_b);
    if (*end_a || *end_b || a[i].empty()) {  // a tag such as "[rho]" or "[total"
      EXPECT_EQ(a[i], b[i]) << where;
      continue;
    }
    const double diff = std::fabs(x - y);
    EXPECT_TRUE(diff <= 1e-10 * std::fabs(y) || diff < 1e-12)
        << where << ": token " << i << " is " << a[i] << ", Ludwig printed " << b[i] << "\n ours:   " << ours
        << "\n Ludwig: " << theirs;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a deck the way tessera-lb does and returns its statistics lines (initial and final).
std::vector<std::string> run_deck(const std::string& deck, std::string& header) {
  const lb::Parameters p = lb::read_input(deck);
  lb::Solver solver(p);
  header = lb::format_header(p, solver.geometry(), solver.num_wall_links());
  std::string out = lb::format_statistics(lb::compute_statistics(solver.snapshot(), solver.geometry(), p), p);
  for (int t = 1; t <= p.n_cycles; ++t) {
    solver.step();
    if (t % p.freq_statistics == 0)
      out += lb::format_statistics(lb::compute_statistics(solver.snapshot(), solver.geometry(), p), p);
  }
  return statistics_lines(out);
}

void check_against_log(const char* name, const char* target) {
  targetInit(target);
  const std::string dir = LB_REGRESSION_DIR;
  std::string header;
  const auto ours = run_deck(dir + "/" + name + ".inp", header);
  const std::string log = read_file(dir + "/" + name + ".log");
  const auto theirs = statistics_lines(log);
  ASSERT_EQ(ours.size(), theirs.size()) << "a different number of statistics lines than Ludwig printed";
  for (std::size_t i = 0; i < ours.size(); ++i) expect_same_numbers(ours[i], theirs[i], std::string(name) + " line " + std::to_string(i));
  // The derived constants of the run, as Ludwig prints them.
  for (const char* constant : {"Surface tension       =  4.71405e-03", "Interfacial width     =  1.13137e+00",
                               "Mobility M            =  3.75000e+00"}) {
    EXPECT_NE(header.find(constant), std::string::npos) << constant;
    EXPECT_NE(log.find(constant), std::string::npos) << constant;
  }
  EXPECT_NE(header.find("Shear relaxation time:  5.18750e-01"), std::string::npos) << header;
  targetFinalize();
}

TEST(LbRegression, SpinodalLb1On64CubedMatchesLudwigsLogOnTheHost) { check_against_log("serial-spin-lb1", "host"); }

TEST(LbRegression, SpinodalLb2WithWallsMatchesLudwigsLogOnTheHost) { check_against_log("serial-spin-lb2", "host"); }

TEST(LbRegression, SpinodalLb2WithWallsMatchesLudwigsLogOnASimDevice) {
  check_against_log("serial-spin-lb2", "sim:1");
}

TEST(LbRegression, TheWallsOfLb2HaveLudwigsNumberOfLinks) {
  targetInit("host");
  const lb::Parameters p = lb::read_input(std::string(LB_REGRESSION_DIR) + "/serial-spin-lb2.inp");
  {
    lb::Solver solver(p);
    EXPECT_EQ(solver.num_wall_links(), 30336u);  // "Wall boundary links allocated: 30336"
  }
  targetFinalize();
}

}  // namespace
