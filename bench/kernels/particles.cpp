// Particle update x += v * dt over 10^7 particles (a 1000 x 100 x 100 tensor) in float and
// double: tessera's Contiguous (AoS), Strided (SoA) and Tiled<8>/<16> (AoSoA) layouts against
// hand-written AoS and SoA OpenMP loops, and Tiled<V> also against a hand-written AoSoA loop of
// the same V, all timed in the same interleaved rounds. Values are dyadic and dt = 0.5, so
// after equally many calls every variant must agree exactly.
#include "baselines.hpp"
#include "kernels.hpp"
#include "particle.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::bench {

namespace {

template <typename T>
const char* type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

/// The hand-written loops' data, rebuilt for each layout so every variant sees the same calls.
template <typename T>
struct Baselines {
  std::vector<baseline::ParticleAoS<T>> aos;
  std::vector<T> soa_data;
  baseline::ParticlesSoA<T> soa{};
  explicit Baselines(std::size_t n) : aos(n), soa_data(6 * n) {
    T* p = soa_data.data();
    soa = {p, p + n, p + 2 * n, p + 3 * n, p + 4 * n, p + 5 * n};
    for (std::size_t k = 0; k < n; ++k) {
      const Particle<T> q = initial_particle<T>(k);
      aos[k] = {q.position()[0], q.position()[1], q.position()[2], q.velocity()[0], q.velocity()[1], q.velocity()[2]};
      soa.px[k] = aos[k].px, soa.py[k] = aos[k].py, soa.pz[k] = aos[k].pz;
      soa.vx[k] = aos[k].vx, soa.vy[k] = aos[k].vy, soa.vz[k] = aos[k].vz;
    }
  }
};

template <typename T, typename L>
void run_layout(Report& report, const Settings& s, StreamArrays& triad, Executor& ex, MemoryManager& memory,
                const Extent<3>& size, const char* layout_name) {
  const std::size_t n = size.volume();
  const T dt = T(0.5);
  Tensor<Particle<T>, 3, L> t(memory, size, TensorOptions<3>{}.named("particles"));
  {
    std::vector<Particle<T>> dense(n);
    for (std::size_t k = 0; k < n; ++k) dense[k] = initial_particle<T>(k);
    t.fill_from(dense.data());
  }
  Baselines<T> base(n);
  std::vector<std::pair<std::string, std::function<void()>>> variants = {
      {"tessera",
       [&] {
         for_each(
             ex, [](auto p, T h) { p->update(h); }, t, dt);
       }},
      {"openmp-aos", [&] { baseline::particles_aos(base.aos.data(), n, dt); }},
      {"openmp-soa", [&] { baseline::particles_soa(base.soa, n, dt); }},
      {"stream-triad", [&] { triad.triad(); }}};
  // Tiled<V> against the same layout written by hand: what the layout costs here, apart from tessera.
  constexpr std::size_t V = tile_width<L>();
  std::vector<T> aosoa;
  if constexpr (V > 0) {
    aosoa.resize(6 * n);
    for (std::size_t k = 0; k < n; ++k) {
      T* tile = aosoa.data() + (k / V) * 6 * V + k % V;
      const auto& a = base.aos[k];
      const T values[6] = {a.px, a.py, a.pz, a.vx, a.vy, a.vz};
      for (std::size_t c = 0; c < 6; ++c) tile[c * V] = values[c];
    }
    variants.push_back({"openmp-aosoa", [&] { baseline::particles_aosoa<T, V>(aosoa.data(), n, dt); }});
  }
  const auto r = Interleaved::run(s.rounds, std::move(variants));
  // Useful traffic: read position and velocity, write position.
  const double bytes = 9.0 * sizeof(T) * static_cast<double>(n);
  const std::string name = std::string("particles-") + type_name<T>() + "-" + std::to_string(n);
  const std::string variant = std::string("tessera-") + layout_name;
  auto renamed = r;
  renamed.names[renamed.index("tessera")] = variant;
  report_pair(report, name, renamed, variant, "openmp-aos", bytes);
  report_pair(report, name, renamed, variant, "openmp-soa", bytes);
  if constexpr (V > 0) report_pair(report, name, renamed, variant, "openmp-aosoa", bytes);
  report_vs_stream(report, name, renamed, variant, bytes, triad.triad_bytes());
  report_vs_stream(report, name + "/" + layout_name, renamed, "openmp-aos", bytes, triad.triad_bytes());
  report_vs_stream(report, name + "/" + layout_name, renamed, "openmp-soa", bytes, triad.triad_bytes());

  std::vector<Particle<T>> got(n);
  t.gather_to(got.data());
  for (std::size_t k = 0; k < n; ++k) {
    const auto& a = base.aos[k];
    const auto x = got[k].position();
    const auto v = got[k].velocity();
    const bool same_aos =
        x[0] == a.px && x[1] == a.py && x[2] == a.pz && v[0] == a.vx && v[1] == a.vy && v[2] == a.vz;
    const bool same_soa = base.soa.px[k] == a.px && base.soa.py[k] == a.py && base.soa.pz[k] == a.pz;
    bool same_aosoa = true;
    if constexpr (V > 0) {
      const T* tile = aosoa.data() + (k / V) * 6 * V + k % V;
      same_aosoa = tile[0] == a.px && tile[V] == a.py && tile[2 * V] == a.pz;
    }
    if (!same_aos || !same_soa || !same_aosoa) {
      mismatch(name + " " + variant + ": particle " + std::to_string(k) + " differs from the OpenMP loops' (x " +
               std::to_string(got[k].position()[0]) + " vs " + std::to_string(a.px) + ")");
      break;
    }
  }
}

template <typename T>
void run_type(Report& report, const Settings& s, StreamArrays& triad, Executor& ex, MemoryManager& memory) {
  const Extent<3> size = s.quick ? Extent<3>{1000, 100, 20} : Extent<3>{1000, 100, 100};
  run_layout<T, Contiguous>(report, s, triad, ex, memory, size, "contiguous");
  run_layout<T, Strided>(report, s, triad, ex, memory, size, "strided");
  run_layout<T, Tiled<8>>(report, s, triad, ex, memory, size, "tiled8");
  run_layout<T, Tiled<16>>(report, s, triad, ex, memory, size, "tiled16");
}

}  // namespace

void run_particles(Report& report, const Settings& s, StreamArrays& triad) {
  Executor ex;
  DeviceSet devices = DeviceSet::select("host");
  MemoryManager memory(devices);
  run_type<float>(report, s, triad, ex, memory);
  run_type<double>(report, s, triad, ex, memory);
}

}  // namespace tessera::bench
