#pragma once
// The apps' one command-line parser, on CLI11: every app gets `--help` (usage, with each option's
// default), `--version`, `--config FILE` (the same options as `key = value` lines, TOML or INI;
// a key that names no option is an error) and the same errors: the option, the value and what was
// expected, then exit code 2.
//
//   CLI::App app{"OPS's Poisson test on the loops front end", "tessera-poisson"};
//   tessera_app::add_standard_options(app);
//   app.add_option("--sizex", nx, "cells along x")->capture_default_str()->check(CLI::PositiveNumber);
//   app.add_option("--out", dir, "output directory")->check(tessera_app::not_an_option);
//   app.add_option("--steps", steps, "steps")->check(tessera_app::not_negative)->check(CLI::Range(0, 1000));
//   app.add_option("--cfl", cfl, "Courant number")->check(tessera_app::finite_in(0, 1, tessera_app::Ends::open_below));
//   if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
//
// The validators below fill gaps of CLI11 2.1.2 (Debian's): see each.

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#ifndef TESSERA_VERSION_STRING
#define TESSERA_VERSION_STRING "unknown"
#endif

namespace tessera_app {

/// Adds --version (the app's name and tessera's version) and --config to `app`.
inline void add_standard_options(CLI::App& app) {
  app.set_version_flag("--version", app.get_name() + " (tessera " TESSERA_VERSION_STRING ")");
  app.set_config("--config", "", "read options from FILE: one `option = value` line each (TOML or INI)");
  // CLI11 ignores keys it does not know by default, so a misspelt `sise = 400` would run with the
  // default size and say nothing.
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.get_formatter()->column_width(34);
}

/// Parses the command line. Empty: go on. Else the exit code: 0 after --help or --version
/// (printed), 2 after a parse error (printed to stderr with the usage hint).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse KEY" for an unknown key, TOML files too.
    std::string what = e.what();
    const std::string unknown = "INI was not able to parse ";
    if (what.rfind(unknown, 0) == 0)
      what = "--config: " + what.substr(unknown.size()) + " is not an option of " + app.get_name();
    std::cerr << what << "\nRun with --help for more information.\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

/// Which ends of a finite_in interval belong to it (an infinite end never does).
enum class Ends { closed, open_below };

/// A finite number in [lo, hi] or (lo, hi]. CLI11's Range and PositiveNumber let inf and nan
/// through (no comparison with nan holds), and `--t-final inf` would never end.
inline CLI::Validator finite_in(double lo, double hi, Ends ends = Ends::closed) {
  std::ostringstream text;
  text << (ends == Ends::open_below || std::isinf(lo) ? "(" : "[") << lo << ", " << hi << (std::isinf(hi) ? ")" : "]");
  const std::string interval = text.str();
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(x))
          return "Value " + value + " is not a finite number";
        const bool above = ends == Ends::open_below ? x > lo : x >= lo;
        if (!(above && x <= hi)) return "Value " + value + " not in " + interval;
        return {};
      },
      "FLOAT in " + interval);
}

/// For every option that takes text (paths, device selections, names). CLI11 takes the argument
/// after an option as its value even when it is the next option, so a forgotten value
/// (`--out --size 16`) would otherwise name a directory "--size".
inline const CLI::Validator not_an_option(
    [](std::string& value) -> std::string {
      return value.rfind("--", 0) == 0 ? "needs a value, not the option '" + value + "'" : "";
    },
    "");

/// For every unsigned option, before its range. CLI11 reads unsigned values with strtoull, which
/// takes "-1" as 2^64 - 1 (and "-18446744073709551615" as 1) and 2^64 as 2^64 - 1: an option
/// without a range, or with a range in its own unsigned type, would run with a value never typed.
inline const CLI::Validator not_negative(
    [](std::string& value) -> std::string {
      std::size_t i = 0;
      while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i]))) ++i;
      if (i < value.size() && value[i] == '-') return "Value " + value + " is negative";
      errno = 0;
      char* end = nullptr;
      (void)std::strtoull(value.c_str(), &end, 0);
      if (errno == ERANGE) return "Value " + value + " is too large";
      return {};
    },
    "");

/// The device selection for kernels compiled by the host compiler, which cannot run on a CUDA
/// GPU: `given` (--devices), else TESSERA_DEVICES, else the host, not DeviceSet's default of
/// every GPU found. "" tells DeviceSet::select to read TESSERA_DEVICES itself, so its errors
/// name the variable.
inline std::string device_selection(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("TESSERA_DEVICES");
  return env != nullptr && *env != '\0' ? std::string{} : "host";
}

}  // namespace tessera_app
