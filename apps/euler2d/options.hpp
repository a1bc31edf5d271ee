#pragma once
// tessera-euler2d's command line: its settings, their options and the checks that need no I/O.
// Apart from main.cpp so that fuzz/fuzz_app_cli.cpp parses the same command line.

#include <tessera/core/error.hpp>
#include <tessera/io/png.hpp>
#include <tessera_app/cli.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>

namespace euler2d {

struct Settings {
  std::string problem = "shock-bubble";
  std::string axis = "x";
  std::size_t size = 200;
  std::optional<std::size_t> steps;  // a step budget; the run also stops at t_final
  std::optional<double> t_final;
  double cfl = 0.9;
  std::string devices;  // empty: TESSERA_DEVICES, else every CUDA GPU, else the host
  std::string layout = "strided";
  std::string out = "euler2d-out";
  std::size_t png_every = 0;  // 0: only the first and last snapshot
  std::size_t h5_every = 0;   // 0: no HDF5 output
  std::size_t checkpoint_every = 0;
  std::size_t check_finite_every = 0;  // 0: only before each output and at the end
  std::string restart;
  std::string trace;  // a Chrome/Perfetto trace of the steps' nodes and device streams
  std::size_t steps_per_run = 16;  // steps a run of the step graph takes when no host work is due
  bool capture = false;            // record the step graphs' device work once, then replay it
};

inline void add_options(CLI::App& app, Settings& s) {
  using tessera_app::not_an_option;
  using tessera_app::not_negative;
  const auto count = CLI::Range(0, 1 << 30);
  app.add_option("--problem", s.problem, "the shock-bubble, the planar shock alone, or Toro's tests 1-5")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"shock-bubble", "shock", "toro1", "toro2", "toro3", "toro4", "toro5"}));
  app.add_option("--axis", s.axis, "direction of a Toro test")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"x", "y"}));
  app.add_option("--size", s.size, "cells per side (a Toro test: cells along the axis, 4 across)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(4, 1 << 20));
  app.add_option("--steps", s.steps, "stop after S steps (default: run to t_final)")->check(not_negative)->check(count);
  app.add_option("--t-final", s.t_final, "end time (default: the problem's)")
      ->check(tessera_app::finite_in(0, std::numeric_limits<double>::infinity(), tessera_app::Ends::open_below));
  app.add_option("--cfl", s.cfl, "Courant number")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 1, tessera_app::Ends::open_below));
  app.add_option("--devices", s.devices,
                 "host, sim:N[:SIZE], cuda, ... (default: TESSERA_DEVICES, else every GPU, else host)")
      ->check(not_an_option);
  app.add_option("--layout", s.layout, "layout of the state")
      ->capture_default_str()
      ->check(not_an_option)
      ->check(CLI::IsMember({"contiguous", "strided", "tiled"}));
  app.add_option("--out", s.out, "output directory")->capture_default_str()->check(not_an_option);
  app.add_option("--png-every", s.png_every, "a density PNG every K steps (0: the first and the last)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(count);
  app.add_option("--h5-every", s.h5_every, "HDF5/XDMF output every K steps (0: none)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(count);
  app.add_option("--checkpoint-every", s.checkpoint_every, "a checkpoint every K steps (0: only final.ckpt)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(count);
  app.add_option("--check-finite", s.check_finite_every,
                 "stop with an error naming the cell if the state is not finite, checked every K steps (0: before "
                 "each output and at the end)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(count);
  app.add_option("--restart", s.restart, "continue from a checkpoint of the same problem and size")
      ->check(not_an_option);
  app.add_option("--trace", s.trace, "write a Chrome/Perfetto trace of the steps")->check(not_an_option);
  app.add_option("--steps-per-run", s.steps_per_run,
                 "steps the devices take back to back, without the host, between output and progress lines "
                 "(1: the host waits after every step)")
      ->capture_default_str()
      ->check(not_negative)
      ->check(CLI::Range(1, 1 << 16));
  app.add_flag("--capture", s.capture,
               "record the step graphs' device work once and replay it from then on (one CUDA graph per "
               "run of steps on a GPU); the host and parts it cannot record run as before");
}

/// What the parsed settings cannot do in this build, found before any device or file is touched.
inline void check_settings(const Settings& s) {
  if (s.png_every > 0 && !tessera::io::png_supported())
    throw tessera::Error("--png-every needs PNG output, and this build of tessera has no libpng");
}

}  // namespace euler2d
