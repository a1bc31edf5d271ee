// A checkpoint's clock is checked before a run continues from it: crafted scalars that once
// restarted "at step 18446744073709551615", at an infinite time, past the end, or from another
// problem are each refused, naming the file.

#include "euler2d/problems.hpp"

#include <tessera/core/error.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace {

std::string refusal(double time, std::int64_t step, std::optional<std::int64_t> saved, std::int64_t problem = 1) {
  try {
    euler2d::restart_clock("run.ckpt", time, step, saved, problem, 0.5);
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(RestartChecks, AGoodClockIsKept) {
  const euler2d::RestartClock c = euler2d::restart_clock("run.ckpt", 0.25, 12, 1, 1, 0.5);
  EXPECT_EQ(c.time, 0.25);
  EXPECT_EQ(c.step, 12u);
  // Checkpoints written before the problem was recorded still restart.
  EXPECT_EQ(euler2d::restart_clock("old.ckpt", 0.25, 12, std::nullopt, 1, 0.5).step, 12u);
}

TEST(RestartChecks, BadClocksAreRefusedNamingTheFile) {
  EXPECT_NE(refusal(0.1, -1, 1).find("checkpoint 'run.ckpt' says step -1"), std::string::npos);
  EXPECT_NE(refusal(std::numeric_limits<double>::infinity(), 3, 1).find("a time must be finite"), std::string::npos);
  EXPECT_NE(refusal(std::numeric_limits<double>::quiet_NaN(), 3, 1).find("a time must be finite"), std::string::npos);
  EXPECT_NE(refusal(-0.5, 3, 1).find("not negative"), std::string::npos);
  EXPECT_NE(refusal(0.75, 3, 1).find("nothing left to run"), std::string::npos);
  EXPECT_NE(refusal(0.1, 3, 2, 1).find("another problem"), std::string::npos);
}

}  // namespace
