// tessera-cloverleaf: CloverLeaf 2-D on the loops front end. Reads a clover.in deck, runs the
// hydro cycle, prints a line per step and CloverLeaf's field summary, and for a deck with
// test_problem N compares the final kinetic energy with CloverLeaf's reference value.
//
//   tessera-cloverleaf --deck apps/cloverleaf/decks/clover_bm_short.in
//   tessera-cloverleaf --devices sim:2            (the built-in clover.in_default deck)
//   tessera-cloverleaf --tile-rows 0 --png-every 10
//   tessera-cloverleaf-cuda --devices cuda    (the nvcc build, main_cuda.cu: loops run as GPU kernels)
//   tessera-cloverleaf --config run.toml       (the same options as `deck = "..."` lines; --help lists them)
//
// Without --devices the devices come from TESSERA_DEVICES, else the host (the plain build's loops
// cannot run on a CUDA GPU; the nvcc build runs them there when asked to).
#include "cloverleaf.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/io/hdf5.hpp>
#include <tessera/io/png.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cstdio>
#include <span>
#include <string>

namespace {

void print_summary(const cloverleaf::Summary& s) {
  std::printf("\n Time %.15f\n", s.time);
  std::printf("%13s%16s%16s%16s%16s%16s%16s%16s\n", "", "Volume", "Mass", "Density", "Pressure", "Internal Energy",
              "Kinetic Energy", "Total Energy");
  std::printf(" step:%7d %15.8e %15.8e %15.8e %15.8e %15.8e %15.8e %15.8e\n\n", s.step, s.volume, s.mass, s.density(),
              s.pressure(), s.internal_energy, s.kinetic_energy, s.total_energy());
}

void write_pngs(cloverleaf::Solver& solver, const std::string& prefix, bool& warned) {
  if (!tessera::io::png_supported()) {
    if (!warned) std::printf("note: this tessera was built without libpng; --png-every writes nothing\n");
    warned = true;
    return;
  }
  char name[64];
  std::snprintf(name, sizeof name, "_%06d.png", solver.step());
  const auto nx = std::size_t(solver.nx()), ny = std::size_t(solver.ny());
  const std::vector<double> rho = solver.interior_of(solver.density0());
  const std::vector<double> e = solver.interior_of(solver.energy0());
  tessera::io::write_png(prefix + "density" + name, std::span<const double>(rho), nx, ny);
  tessera::io::write_png(prefix + "energy" + name, std::span<const double>(e), nx, ny);
}

void write_hdf5(cloverleaf::Solver& solver, std::string path) {
  if (path.size() > 3 && path.substr(path.size() - 3) == ".h5") path.resize(path.size() - 3);
  if (!tessera::io::hdf5_supported()) {
    std::printf("note: this tessera was built without HDF5; --hdf5 %s writes nothing\n", path.c_str());
    return;
  }
  try {
    const auto& d = solver.deck();
    tessera::io::Hdf5Series out(
        path, {{std::size_t(solver.nx()), std::size_t(solver.ny())}, {d.xmin, d.ymin}, {solver.dx(), solver.dy()}});
    out.begin_step(solver.step(), solver.time());
    out.write("density", solver.interior_of(solver.density0()));
    out.write("energy", solver.interior_of(solver.energy0()));
    out.write("pressure", solver.interior_of(solver.pressure()));
    out.end_step();
    out.close();
    std::printf("wrote %s.h5 and %s.xmf\n", path.c_str(), path.c_str());
  } catch (const tessera::Error& e) {
    std::printf("note: no HDF5 output: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string devices, deck_path, hdf5_path, png_prefix = "clover_";  // devices empty: TESSERA_DEVICES, else host
  tessera::loops::ContextOptions options;
  int steps = -1, summary_every = -1, png_every = 0, tile_rows = -1;
  bool quiet = false;
  cloverleaf::Deck deck;
  CLI::App app{"CloverLeaf 2-D (the whole hydro cycle) on the loops front end", "tessera-cloverleaf"};
  tessera_app::add_standard_options(app);
  const auto count = CLI::Range(0, 1 << 30);
  app.add_option("--deck", deck_path, "a clover.in deck (default: the built-in clover.in_default)")
      ->check(tessera_app::not_an_option);
  app.add_option("--devices", devices,
                 "host, sim:N[:SIZE][:speed=S,...] or cuda (the nvcc build) (default: TESSERA_DEVICES, else the host)")
      ->check(tessera_app::not_an_option);
  app.add_flag("--hybrid", options.hybrid, "the CPU workers take a part beside the devices");
  app.add_flag("--overlapped", options.overlapped_tiles,
               "one overlapped tile per participant a chain (OPS's Algorithm 2)");
  app.add_option("--tile-rows", tile_rows, "cache-blocked chains, tiles of N rows (0: sized from the cache)")
      ->check(count);
  app.add_option("--steps", steps, "stop after N steps (the test problem is then not checked)")->check(count);
  app.add_option("--summary-every", summary_every, "a field summary every N steps (default: the deck's)")->check(count);
  app.add_option("--png-every", png_every, "PNGs of density and energy every N steps (0: none)")
      ->capture_default_str()
      ->check(count);
  app.add_option("--png-prefix", png_prefix, "where the PNGs go")
      ->capture_default_str()
      ->check(tessera_app::not_an_option);
  app.add_option("--hdf5", hdf5_path, "HDF5/XDMF output of the final state")->check(tessera_app::not_an_option);
  app.add_flag("--quiet", quiet, "no line per step");
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (tile_rows >= 0) {
    options.tiled = true;
    options.tile_rows = tile_rows;
  }
  try {
    deck = deck_path.empty() ? cloverleaf::parse_deck_text(cloverleaf::default_deck_text, "built-in clover.in_default")
                             : cloverleaf::read_deck(deck_path);
    if (steps >= 0 && steps != deck.end_step) {
      deck.end_step = steps;
      if (deck.test_problem >= 1)
        std::printf("note: --steps changes the run, so test problem %d is not checked\n", deck.test_problem);
      deck.test_problem = 0;
    }
    if (summary_every >= 0) deck.summary_frequency = summary_every;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-cloverleaf: %s\n", e.what());
    return 2;
  }

  try {
    auto set = tessera::DeviceSet::select(tessera_app::device_selection(devices));
    tessera::Executor executor;
    tessera::loops::Context context(set, executor, options);
    std::printf("CloverLeaf 2-D on tessera loops: %s, %d x %d cells, devices %s%s%s\n",
                deck_path.empty() ? "built-in clover.in_default" : deck_path.c_str(), deck.x_cells, deck.y_cells,
                set.num_accelerators() == 0 ? "host" : set.spec().c_str(), options.tiled ? ", tiled" : "",
                options.overlapped_tiles ? ", overlapped tiles" : "");
    cloverleaf::Solver solver(context, deck);
    print_summary(solver.field_summary());
    bool png_warned = false;
    if (png_every > 0) write_pngs(solver, png_prefix, png_warned);

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    double first_step = 0.0;
    while (!solver.finished()) {
      const auto t0 = clock::now();
      const cloverleaf::StepInfo s = solver.advance();
      if (!quiet) std::printf(" Step %7d time %11.7f control %-5s timestep %.6e\n", s.step, s.time, s.control, s.dt);
      const int f = deck.summary_frequency;
      if (f != 0 && solver.step() % f == 0 && !solver.finished()) print_summary(solver.field_summary());
      if (png_every > 0 && solver.step() % png_every == 0) write_pngs(solver, png_prefix, png_warned);
      if (s.step == 1) first_step = std::chrono::duration<double>(clock::now() - t0).count();
    }
    const cloverleaf::Summary final_summary = solver.field_summary();
    const double wall = std::chrono::duration<double>(clock::now() - start).count();
    print_summary(final_summary);
    const double cell_steps = double(deck.x_cells) * deck.y_cells * solver.step();
    std::printf(
        "Calculation complete: %d steps, wall clock %.3f s (first step %.3f s), %.2f ms per step, "
        "%.3e cell-steps/s\n",
        solver.step(), wall, first_step, solver.step() > 0 ? 1e3 * wall / solver.step() : 0.0,
        wall > 0 ? cell_steps / wall : 0.0);
    std::printf("Loops run: %zu in %zu chain graphs built", context.executed(), context.graphs_built());
    if (options.tiled)
      std::printf(", last chain in %zu tiles of %d rows", context.last_tiles(), context.last_tile_rows());
    std::printf("\n");
    if (!hdf5_path.empty()) write_hdf5(solver, hdf5_path);

    if (deck.test_problem >= 1) {
      const double ref = cloverleaf::expected_kinetic_energy(deck.test_problem);
      if (ref == 0.0) {
        std::printf("Test problem %d has no reference value\n", deck.test_problem);
        return 0;
      }
      const double qa_diff = std::fabs(100.0 * (final_summary.kinetic_energy / ref) - 100.0);
      std::printf("Test problem %d is within %16.7e%% of the expected solution\n", deck.test_problem, qa_diff);
      if (qa_diff < 0.001) {
        std::printf("This test is considered PASSED\n");
        return 0;
      }
      std::printf("This test is considered NOT PASSED\n");
      return 1;
    }
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-cloverleaf: %s\n", e.what());
    return 1;
  }
}
