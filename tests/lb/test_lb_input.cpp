// Ludwig-style input files: the reference decks parse to the values they hold, and every kind
// of bad input is a tessera::Error naming the file, the line and the key.

#include "input.hpp"
#include "statistics.hpp"

#include <tessera/core/error.hpp>

#include <gtest/gtest.h>

#include <string>

#ifndef LB_REGRESSION_DIR
#error "LB_REGRESSION_DIR must name apps/lb/regression"
#endif

namespace {

std::string error_of(const std::string& text) {
  try {
    lb::parse_input(text, "deck.inp");
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LbInput, TheFirstReferenceDeckHoldsWhatLudwigReads) {
  const lb::Parameters p = lb::read_input(std::string(LB_REGRESSION_DIR) + "/serial-spin-lb1.inp");
  EXPECT_EQ(p.parameters_read, 19);  // the keys in the file (Ludwig counts 20: it adds one of its own)
  EXPECT_EQ(p.n_cycles, 10);
  EXPECT_EQ(p.size, (std::array<int, 3>{64, 64, 64}));
  EXPECT_EQ(p.periodic, (std::array<int, 3>{1, 1, 1}));
  EXPECT_FALSE(p.any_walls());
  EXPECT_DOUBLE_EQ(p.viscosity, 0.00625);
  EXPECT_DOUBLE_EQ(p.a, -0.00625);
  EXPECT_DOUBLE_EQ(p.b, 0.00625);
  EXPECT_DOUBLE_EQ(p.kappa, 0.004);
  EXPECT_DOUBLE_EQ(p.mobility, 3.75);
  EXPECT_EQ(p.gradient, lb::Gradient::fluid_27pt);
  EXPECT_EQ(p.random_seed, 8361235u);
  // The derived constants Ludwig prints for them.
  EXPECT_NEAR(lb::surface_tension(p), 4.71405e-03, 0.5e-8);
  EXPECT_NEAR(lb::interfacial_width(p), 1.13137, 0.5e-5);
}

TEST(LbInput, TheSecondReferenceDeckHasWallsOnEveryAxis) {
  const lb::Parameters p = lb::read_input(std::string(LB_REGRESSION_DIR) + "/serial-spin-lb2.inp");
  EXPECT_EQ(p.parameters_read, 21);
  EXPECT_EQ(p.walls, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(p.periodic, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(p.gradient, lb::Gradient::solid_27pt);
  EXPECT_EQ(p.freq_statistics, 40);
}

TEST(LbInput, BadInputIsNamedByFileLineAndKey) {
  EXPECT_NE(error_of("size 8_8_8\nviscosty 0.1\n").find("deck.inp line 2: viscosty is not a known key"),
            std::string::npos);
  EXPECT_NE(error_of("size 8_8\n").find("line 1: size expects three integers as N_N_N, got '8_8'"), std::string::npos);
  EXPECT_NE(error_of("size 8_x_8\n").find("size expects an integer, got 'x'"), std::string::npos);
  EXPECT_NE(error_of("viscosity -1\n").find("viscosity must be positive"), std::string::npos);
  EXPECT_NE(error_of("viscosity 1e400\n").find("viscosity expects a finite number"), std::string::npos);
  EXPECT_NE(error_of("N_cycles\n").find("N_cycles has no value"), std::string::npos);
  EXPECT_NE(error_of("N_cycles 10 20\n").find("N_cycles has more than one value"), std::string::npos);
  EXPECT_NE(error_of("free_energy lc_blue_phase\n").find("'lc_blue_phase' is not supported"), std::string::npos);
  EXPECT_NE(error_of("ghost_modes maybe\n").find("ghost_modes expects on or off"), std::string::npos);
  EXPECT_NE(error_of("boundary_walls 1_0_0\nperiodicity 1_1_1\n").find("axis x has walls and is periodic"),
            std::string::npos);
  EXPECT_NE(error_of("periodicity 0_1_1\n").find("axis x is neither periodic nor walled"), std::string::npos);
  EXPECT_NE(error_of("boundary_speed_top 0.1\n").find("moving walls are not implemented"), std::string::npos);
  EXPECT_NE(error_of("random_seed 0\n").find("random_seed must be a positive integer"), std::string::npos);
  EXPECT_NE(error_of("B -1\n").find("B must be positive"), std::string::npos);
  try {
    lb::read_input("/no/such/deck.inp");
    FAIL();
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open input file '/no/such/deck.inp'"), std::string::npos);
  }
}

TEST(LbInput, CommentsAndBlankLinesAreSkipped) {
  const lb::Parameters p = lb::parse_input("# header\n\n   \nsize 4_6_8   # trailing comment\n");
  EXPECT_EQ(p.size, (std::array<int, 3>{4, 6, 8}));
  EXPECT_EQ(p.parameters_read, 1);
}

}  // namespace
