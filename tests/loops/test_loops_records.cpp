// Record datasets: a two-member Record (a density and a 2-vector velocity) in every layout, on
// the host, sim devices, hybrid and overlapped tiles, gives the bits that the same loops give
// over one plain dataset per component; fetch and assign go through the layout; a Record on a
// 1-D block is refused.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/layout.hpp>
#include <tessera/loops.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace tl = tessera::loops;

// DOC record begin
template <typename T, typename S = tessera::Owned>
struct Fluid : tessera::Record<S, T, tessera::Vector<T, 2>> {
  TESSERA_RECORD(Fluid)
  TESSERA_FIELD(density, 0)
  TESSERA_FIELD(velocity, 1)
};

// One advection-like step: each site's velocity from its neighbours' densities, then the
// density from its neighbours' velocities. Any layout: the kernels see views.
template <tessera::Layout L>
void step(tl::Block& grid, tl::Dataset<Fluid<double>, L>& in, tl::Dataset<Fluid<double>, L>& out, int n) {
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  tl::par_loop(
      [](tl::Acc<Fluid<double>, L> o, tl::Acc<const Fluid<double>, L> i) {
        o(0, 0).velocity().x = 0.5 * (i(1, 0).density() - i(-1, 0).density());
        o(0, 0).velocity().y = 0.5 * (i(0, 1).density() - i(0, -1).density());
        o(0, 0).density() = i(0, 0).density();
      },
      "gradient", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(out, site), tl::read(in, cross));
  tl::par_loop(
      [](tl::Acc<Fluid<double>, L> o, tl::Acc<const Fluid<double>, L> i) {
        o(0, 0).density() = i(0, 0).density() - 0.1 * (i(1, 0).velocity().x - i(-1, 0).velocity().x +
                                                       i(0, 1).velocity().y - i(0, -1).velocity().y);
        o(0, 0).velocity() = i(0, 0).velocity();
      },
      "divergence", grid, tl::Range::of(2, {0, n, 0, n}), tl::write(in, site), tl::read(out, cross));
}
// DOC record end

struct Fields {
  std::vector<double> density, vx, vy;
};

template <tessera::Layout L>
Fields run_records(const char* spec, const tl::ContextOptions& options, int n, int steps) {
  auto devices = tessera::DeviceSet::select(spec);
  tessera::Executor executor;
  tl::Context context(devices, executor, options);
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<Fluid<double>, L> a(grid, shape, "a"), b(grid, shape, "b");
  std::vector<Fluid<double>> init(a.elements());
  for (std::size_t e = 0; e < init.size(); ++e) {
    init[e].density() = double((e * 7) % 13) / 13.0;
    init[e].velocity().x = double((e * 5) % 11) / 11.0;
    init[e].velocity().y = -double((e * 3) % 7) / 7.0;
  }
  a.assign(init);
  tl::Reduction<double> mass(context, tl::ReduceOp::inc, "mass");
  for (int s = 0; s < steps; ++s) step(grid, a, b, n);
  tl::par_loop([](tl::Acc<const Fluid<double>, L> v, double& m) { m += v(0, 0).density(); }, "mass", grid,
               tl::Range::of(2, {0, n, 0, n}), tl::read(a, tl::Stencil(2, {{0, 0, 0}}, "site")), tl::reduce(mass));
  Fields out;
  out.density.push_back(mass.get());
  for (const Fluid<double>& f : a.fetch()) {
    out.density.push_back(f.density());
    out.vx.push_back(f.velocity().x);
    out.vy.push_back(f.velocity().y);
  }
  return out;
}

// The same loops over one plain dataset per component.
Fields run_plain(int n, int steps) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  const tl::Shape shape{.size = {n, n, 1}, .d_m = {-1, -1, 0}, .d_p = {1, 1, 0}};
  tl::Dataset<double> ad(grid, shape, "ad"), ax(grid, shape, "ax"), ay(grid, shape, "ay");
  tl::Dataset<double> bd(grid, shape, "bd"), bx(grid, shape, "bx"), by(grid, shape, "by");
  std::vector<double> d(ad.elements()), x(ad.elements()), y(ad.elements());
  for (std::size_t e = 0; e < d.size(); ++e) {
    d[e] = double((e * 7) % 13) / 13.0;
    x[e] = double((e * 5) % 11) / 11.0;
    y[e] = -double((e * 3) % 7) / 7.0;
  }
  ad.assign(d);
  ax.assign(x);
  ay.assign(y);
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  const tl::Stencil cross(2, {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}}, "cross");
  const tl::Range r = tl::Range::of(2, {0, n, 0, n});
  using W = tl::Acc<double>;
  using R = tl::Acc<const double>;
  for (int s = 0; s < steps; ++s) {
    tl::par_loop(
        [](W ox, W oy, W od, R id) {
          ox(0, 0) = 0.5 * (id(1, 0) - id(-1, 0));
          oy(0, 0) = 0.5 * (id(0, 1) - id(0, -1));
          od(0, 0) = id(0, 0);
        },
        "gradient", grid, r, tl::write(bx, site), tl::write(by, site), tl::write(bd, site), tl::read(ad, cross));
    tl::par_loop(
        [](W od, W ox, W oy, R id, R ix, R iy) {
          od(0, 0) = id(0, 0) - 0.1 * (ix(1, 0) - ix(-1, 0) + iy(0, 1) - iy(0, -1));
          ox(0, 0) = ix(0, 0);
          oy(0, 0) = iy(0, 0);
        },
        "divergence", grid, r, tl::write(ad, site), tl::write(ax, site), tl::write(ay, site), tl::read(bd, site),
        tl::read(bx, cross), tl::read(by, cross));
  }
  tl::Reduction<double> mass(context, tl::ReduceOp::inc, "mass");
  tl::par_loop([](R v, double& m) { m += v(0, 0); }, "mass", grid, r, tl::read(ad, site), tl::reduce(mass));
  Fields out;
  out.density.push_back(mass.get());
  for (double v : ad.fetch()) out.density.push_back(v);
  out.vx = ax.fetch();
  out.vy = ay.fetch();
  return out;
}

void expect_same(const Fields& got, const Fields& want, const std::string& what) {
  EXPECT_EQ(got.density, want.density) << what;
  EXPECT_EQ(got.vx, want.vx) << what;
  EXPECT_EQ(got.vy, want.vy) << what;
}

TEST(LoopsRecords, EveryLayoutGivesThePlainDatasetsBitsOnEveryDeviceSet) {
  const int n = 70, steps = 4;
  const Fields want = run_plain(n, steps);
  for (const char* spec : {"host", "sim:1:32MiB", "sim:3:32MiB"}) {
    expect_same(run_records<tessera::Contiguous>(spec, {}, n, steps), want, std::string("Contiguous on ") + spec);
    expect_same(run_records<tessera::Strided>(spec, {}, n, steps), want, std::string("Strided on ") + spec);
    expect_same(run_records<tessera::Tiled<8>>(spec, {}, n, steps), want, std::string("Tiled<8> on ") + spec);
  }
  expect_same(run_records<tessera::Strided>("sim:2:32MiB", {.hybrid = true}, n, steps), want, "Strided hybrid");
  expect_same(run_records<tessera::Strided>("sim:2:32MiB", {.hybrid = true, .overlapped_tiles = true}, n, steps), want,
              "Strided in overlapped tiles");
  expect_same(run_records<tessera::Tiled<8>>("host", {.tiled = true, .tile_rows = 5}, n, steps), want,
              "Tiled<8> cache-tiled");
}

TEST(LoopsRecords, AStridedDatasetStoresEachMemberAlongTheLine) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block grid(context, 2, "grid");
  tl::Dataset<Fluid<double>, tessera::Strided> f(grid, {.size = {5, 3, 1}}, "f");
  // A line of 5 sites is stored as 8 (64-byte aligned runs), three runs of 8 doubles: density,
  // velocity x, velocity y.
  EXPECT_EQ(f.pitch(), 8u);
  EXPECT_EQ(f.line_bytes(), 3u * 8u * sizeof(double));
  EXPECT_EQ(f.site_bytes(), 3u * sizeof(double));
  std::vector<Fluid<double>> v(f.elements());
  for (std::size_t e = 0; e < v.size(); ++e) {
    v[e].density() = double(e);
    v[e].velocity().x = 100.0 + double(e);
    v[e].velocity().y = 200.0 + double(e);
  }
  f.assign(v);
  const std::vector<Fluid<double>> back = f.fetch();
  for (std::size_t e = 0; e < v.size(); ++e) {
    EXPECT_EQ(back[e].density(), v[e].density());
    EXPECT_EQ(back[e].velocity().y, v[e].velocity().y);
  }
  // The stored bytes: line 1 holds its densities, then its x velocities, each run 8 long.
  const auto* stored = static_cast<const double*>(f.buffer().request(tessera::Access::read).get());
  EXPECT_EQ(stored[24 + 2], 7.0);        // line 1, site 2: element 5 + 2
  EXPECT_EQ(stored[24 + 8 + 2], 107.0);  // its velocity x
  f.buffer().release(tessera::Access::read);
}

TEST(LoopsRecords, ARecordOnA1DBlockIsRefusedNamingTheDataset) {
  auto devices = tessera::DeviceSet::select("host");
  tessera::Executor executor;
  tl::Context context(devices, executor);
  tl::Block line(context, 1, "line");
  try {
    tl::Dataset<Fluid<double>, tessera::Strided> f(line, {.size = {16, 1, 1}}, "cells");
    FAIL() << "a Record on a 1-D block was accepted";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'cells'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 or 3 dimensions"), std::string::npos) << e.what();
  }
}

}  // namespace
