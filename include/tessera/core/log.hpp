#pragma once
// Logging through spdlog, at the level named by the TESSERA_LOG environment variable
// (trace, debug, info, warn, error, off; default info). spdlog stays out of this header so
// including it costs users nothing.
//
//   tessera::log(tessera::LogLevel::info, "running on " + std::to_string(n) + " workers");

#include <string_view>

namespace tessera {

enum class LogLevel { trace, debug, info, warn, error, off };

void log(LogLevel level, std::string_view message);
/// Overrides TESSERA_LOG for the rest of the process.
void set_log_level(LogLevel level);
LogLevel log_level();
/// Parses "trace", "debug", "info", "warn", "error" or "off"; throws tessera::Error otherwise.
LogLevel parse_log_level(std::string_view text);

}  // namespace tessera
