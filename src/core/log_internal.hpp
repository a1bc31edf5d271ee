#pragma once
// Formatted logging for tessera's own sources (spdlog and fmt stay private to the library).

#include <tessera/core/log.hpp>

#include <fmt/format.h>

namespace tessera::detail {

template <class... Args>
void log_at(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < log_level()) return;
  log(level, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... a) { log_at(LogLevel::debug, f, std::forward<Args>(a)...); }
template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... a) { log_at(LogLevel::info, f, std::forward<Args>(a)...); }
template <class... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... a) { log_at(LogLevel::warn, f, std::forward<Args>(a)...); }
template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... a) { log_at(LogLevel::error, f, std::forward<Args>(a)...); }

}  // namespace tessera::detail
