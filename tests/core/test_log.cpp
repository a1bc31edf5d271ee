#include <tessera/core/error.hpp>
#include <tessera/core/log.hpp>

#include <gtest/gtest.h>

using namespace tessera;

TEST(Log, ParsesLevelsAndRejectsOthers) {
  EXPECT_EQ(parse_log_level("trace"), LogLevel::trace);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::warn);
  EXPECT_EQ(parse_log_level("off"), LogLevel::off);
  try {
    parse_log_level("loud");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TESSERA_LOG='loud'"), std::string::npos);
  }
}

TEST(Log, LevelFiltersMessages) {
  set_log_level(LogLevel::error);
  EXPECT_EQ(log_level(), LogLevel::error);
  testing::internal::CaptureStderr();
  log(LogLevel::info, "hidden message");
  log(LogLevel::error, "shown message");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("hidden message"), std::string::npos);
  EXPECT_NE(err.find("shown message"), std::string::npos);
  set_log_level(LogLevel::info);
}
