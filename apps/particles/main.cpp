// Particles moving in 3-D: x += v * dt on a tensor of a user type, in the layout chosen on the
// command line (Ripple §7.2). The Particle type is declared once and used as a value and as a
// view into the tensor in every layout.
//
//   tessera-particles [--layout contiguous|strided|tiled] [--size N] [--steps S] [--devices SPEC]
//
// Without --devices the devices come from TESSERA_DEVICES (else the host).

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>
#include <tessera_app/cli.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

template <typename T, typename S = tessera::Owned>
struct Particle : tessera::Record<S, tessera::Vector<T, 3>, tessera::Vector<T, 3>> {
  TESSERA_RECORD(Particle)
  TESSERA_FIELD(position, 0)
  TESSERA_FIELD(velocity, 1)
  TESSERA_HOST_DEVICE void update(T dt) { position() += velocity() * dt; }
};

struct Settings {
  std::string layout = "strided";
  std::size_t size = 64;  // particles per side of the cube
  int steps = 10;
  std::string devices;  // empty: TESSERA_DEVICES, else the host
};

// Velocities and dt are dyadic, so the tensor must hold exactly x0 + steps * dt * v.
Particle<float> start(std::size_t k) {
  const float f = static_cast<float>(k % 4096);
  return Particle<float>({f, 0.5f * f, -f}, {1.0f, -0.25f * f, 0.125f});
}

template <typename Layout>
int run(const Settings& s) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(tessera_app::device_selection(s.devices));
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  const tessera::Extent<3> n{s.size, s.size, s.size};
  tessera::TensorOptions<3> options;
  options.partitions = tessera::Extent<3>{1, 1, devices.num_accelerators() > 0 ? devices.num_accelerators() : 1};
  tessera::Tensor<Particle<float>, 3, Layout> particles(memory, n, options.named("particles"));

  std::vector<Particle<float>> host(n.volume());
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = start(k);
  particles.fill_from(host.data());

  const float dt = 0.5f;
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < s.steps; ++step)
    tessera::for_each(
        executor, [] TESSERA_HOST_DEVICE(auto p, float h) { p->update(h); }, particles, dt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  particles.gather_to(host.data());
  for (std::size_t k = 0; k < host.size(); ++k) {
    Particle<float> want = start(k);
    want.position() += want.velocity() * (dt * static_cast<float>(s.steps));
    if (!(host[k].position() == want.position())) {
      std::fprintf(stderr, "particles: particle %zu is not where it should be\n", k);
      return 1;
    }
  }
  std::printf("particles: %zu particles, %d steps, %s layout on %s: %.2f ns per particle update, positions ok\n",
              n.volume(), s.steps, Layout::name, devices.num_accelerators() == 0 ? "host" : devices.spec().c_str(),
              seconds * 1e9 / (static_cast<double>(n.volume()) * s.steps));
  return 0;
}

int main(int argc, char** argv) try {
  Settings s;
  CLI::App app{"Ripple's particle update in any layout, every position checked", "tessera-particles"};
  tessera_app::add_standard_options(app);
  app.add_option("--layout", s.layout, "contiguous, strided or tiled")
      ->capture_default_str()
      ->check(tessera_app::not_an_option)
      ->check(CLI::IsMember({"contiguous", "strided", "tiled"}));
  app.add_option("--size", s.size, "particles along each of three axes")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(1, 4096));
  app.add_option("--steps", s.steps, "time steps")->capture_default_str()->check(CLI::Range(0, 1 << 20));
  app.add_option("--devices", s.devices, "host, sim:N[:SIZE] or cuda (default: TESSERA_DEVICES, else the host)")
      ->check(tessera_app::not_an_option);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (s.layout == "contiguous") return run<tessera::Contiguous>(s);
  if (s.layout == "strided") return run<tessera::Strided>(s);
  return run<tessera::Tiled<16>>(s);
} catch (const std::exception& e) {
  std::fprintf(stderr, "particles: %s\n", e.what());
  return 2;
}
