#include <tessera/core/error.hpp>
#include <tessera/core/log.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace tessera {

namespace {

spdlog::level::level_enum to_spdlog(LogLevel l) {
  switch (l) {
    case LogLevel::trace: return spdlog::level::trace;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
    case LogLevel::off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

LogLevel level_from_environment() {
  const char* env = std::getenv("TESSERA_LOG");
  if (env == nullptr || *env == '\0') return LogLevel::info;
  try {
    return parse_log_level(env);
  } catch (const Error& e) {
    std::fprintf(stderr, "tessera: %s; logging at 'info'\n", e.what());
    return LogLevel::info;
  }
}

std::atomic<LogLevel>& current_level() {
  static std::atomic<LogLevel> level{level_from_environment()};
  return level;
}

spdlog::logger& logger() {
  // Messages go to stderr so programs' own output on stdout stays clean.
  static std::shared_ptr<spdlog::logger> l = [] {
    auto lg = spdlog::stderr_color_mt("tessera");
    lg->set_pattern("[tessera %^%l%$] %v");
    lg->set_level(spdlog::level::trace);
    return lg;
  }();
  return *l;
}

}  // namespace

LogLevel parse_log_level(std::string_view text) {
  if (text == "trace") return LogLevel::trace;
  if (text == "debug") return LogLevel::debug;
  if (text == "info") return LogLevel::info;
  if (text == "warn" || text == "warning") return LogLevel::warn;
  if (text == "error") return LogLevel::error;
  if (text == "off") return LogLevel::off;
  throw Error("TESSERA_LOG='" + std::string(text) + "' is not a log level; use trace, debug, info, warn, error or off");
}

void set_log_level(LogLevel level) { current_level().store(level, std::memory_order_relaxed); }

LogLevel log_level() { return current_level().load(std::memory_order_relaxed); }

void log(LogLevel level, std::string_view message) {
  if (level < log_level() || level == LogLevel::off) return;
  logger().log(to_spdlog(level), "{}", message);
}

}  // namespace tessera
