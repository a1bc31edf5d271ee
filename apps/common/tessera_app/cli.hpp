#pragma once
// The apps' one command-line parser, on CLI11: every app gets `--help` (usage, with each option's
// default), `--version`, `--config FILE` (the same options as `key = value` lines, TOML or INI)
// and the same errors: the option, the value and what was expected, then exit code 2.
//
//   CLI::App app{"OPS's Poisson test on the loops front end", "tessera-poisson"};
//   tessera_app::add_standard_options(app);
//   app.add_option("--sizex", nx, "cells along x")->capture_default_str()->check(CLI::PositiveNumber);
//   if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#ifndef TESSERA_VERSION_STRING
#define TESSERA_VERSION_STRING "unknown"
#endif

namespace tessera_app {

/// Adds --version (the app's name and tessera's version) and --config to `app`.
inline void add_standard_options(CLI::App& app) {
  app.set_version_flag("--version", app.get_name() + " (tessera " TESSERA_VERSION_STRING ")");
  app.set_config("--config", "", "read options from FILE: one `option = value` line each (TOML or INI)");
  app.get_formatter()->column_width(34);
}

/// Parses the command line. Empty: go on. Else the exit code: 0 after --help or --version
/// (printed), 2 after a parse error (printed to stderr with the usage hint).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace tessera_app
