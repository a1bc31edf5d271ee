#pragma once
// tessera-poisson's command line: its settings and their options. Apart from main.cpp so that
// fuzz/fuzz_app_cli.cpp parses the same command line.

#include "poisson.hpp"

#include <tessera/loops.hpp>
#include <tessera_app/cli.hpp>

#include <string>

namespace poisson {

struct Settings {
  Problem problem;
  std::string devices;  // empty: TESSERA_DEVICES, else the host
  tessera::loops::ContextOptions context;
  int tile_rows = -1;  // -1: untiled
};

inline void add_options(CLI::App& app, Settings& s) {
  app.add_option("--sizex", s.problem.nx, "cells along x")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--sizey", s.problem.ny, "cells along y")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--iters", s.problem.iterations, "Jacobi iterations")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--devices", s.devices,
                 "host, sim:N[:SIZE][:speed=S,...] or cuda (default: TESSERA_DEVICES, else the host)")
      ->check(tessera_app::not_an_option);
  app.add_option("--tile-rows", s.tile_rows, "cache-blocked chains, tiles of N rows (0: sized from the cache)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("--hybrid", s.context.hybrid, "the CPU workers take a part beside the devices");
  app.add_flag("--overlapped", s.context.overlapped_tiles,
               "one overlapped tile per participant a chain (OPS's Algorithm 2)");
}

}  // namespace poisson
