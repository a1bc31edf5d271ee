// DOC layout-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/layout.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdio>
#include <vector>

template <typename T, typename S = tessera::Owned>
struct Particle : tessera::Record<S, tessera::Vector<T, 3>, tessera::Vector<T, 3>> {
  TESSERA_RECORD(Particle)
  TESSERA_FIELD(position, 0)
  TESSERA_FIELD(velocity, 1)
  TESSERA_HOST_DEVICE void update(T dt) { position() += velocity() * dt; }
};

// The same kernel in any layout, and on an owned value: the update sees a Particle, not its storage.
template <typename L>
int wrong_sites(tessera::MemoryManager& memory, tessera::Executor& ex) {
  std::vector<Particle<float>> start(1000), end(1000);
  for (std::size_t k = 0; k < start.size(); ++k) start[k] = Particle<float>({0, 0, 0}, {1.0f * k, 2, -0.5f * k});
  tessera::Tensor<Particle<float>, 1, L> particles(memory, tessera::Extent<1>{1000});
  particles.fill_from(start.data());
  auto update = [] TESSERA_HOST_DEVICE(auto p) { p->update(0.5f); };
  tessera::for_each(ex, update, particles);
  particles.gather_to(end.data());
  int wrong = 0;
  for (std::size_t k = 0; k < start.size(); ++k) {
    start[k].update(0.5f);  // dyadic values: exact, so equal in every layout
    wrong += !(end[k].position() == start[k].position() && end[k].velocity() == start[k].velocity());
  }
  return wrong;
}

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);
  tessera::Executor ex;
  const int wrong = wrong_sites<tessera::Contiguous>(memory, ex) + wrong_sites<tessera::Strided>(memory, ex) +
                    wrong_sites<tessera::Tiled<8>>(memory, ex);
  std::printf("layout: AoS, SoA and AoSoA particles, %d sites wrong\n", wrong);
  return wrong == 0 ? 0 : 1;
}
// DOC layout-page end
