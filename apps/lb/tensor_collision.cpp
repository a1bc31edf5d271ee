#include "tensor_collision.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

namespace lb {

void tensor_collision(const Geometry& geo, const CollisionParameters& k, CollisionState& st, const std::string& spec,
                      int partitions) {
  tessera::DeviceSet devices = tessera::DeviceSet::select(spec);
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  // Tensor dimension 0 (the fastest) is the lattice's z.
  const tessera::Extent<3> size{static_cast<std::size_t>(geo.n[2]), static_cast<std::size_t>(geo.n[1]),
                                static_cast<std::size_t>(geo.n[0])};
  tessera::TensorOptions<3> options;
  const std::size_t parts = partitions > 0 ? static_cast<std::size_t>(partitions)
                            : devices.num_accelerators() > 0 ? devices.num_accelerators()
                                                             : 1;
  // Split along the slowest axes: y (dimension 1) in two where there are four parts or more.
  options.partitions = parts >= 4 && parts % 2 == 0 ? tessera::Extent<3>{1, 2, parts / 2} : tessera::Extent<3>{1, 1, parts};

  using Layout = tessera::Strided;
  tessera::Tensor<Populations<>, 3, Layout> f(memory, size, tessera::TensorOptions<3>(options).named("f"));
  tessera::Tensor<Populations<>, 3, Layout> g(memory, size, tessera::TensorOptions<3>(options).named("g"));
  tessera::Tensor<double, 3, Layout> phi(memory, size, tessera::TensorOptions<3>(options).named("phi"));
  tessera::Tensor<Vector3<>, 3, Layout> grad(memory, size, tessera::TensorOptions<3>(options).named("grad"));
  tessera::Tensor<double, 3, Layout> delsq(memory, size, tessera::TensorOptions<3>(options).named("delsq"));
  tessera::Tensor<Vector3<>, 3, Layout> u(memory, size, tessera::TensorOptions<3>(options).named("u"));

  const std::size_t ns = geo.nsites, volume = geo.interior_volume();
  std::vector<Populations<>> fh(volume), gh(volume);
  std::vector<Vector3<>> gradh(volume), uh(volume);
  std::vector<double> phih(volume), delsqh(volume);
  std::size_t dense = 0;
  // Dense order: z fastest, then y, then x: exactly the lattice's interior loop order.
  geo.for_each_interior([&](int, int, int, std::size_t s) {
    for (std::size_t p = 0; p < nvel; ++p) {
      fh[dense].get<0>()[p] = st.f[p * ns + s];
      gh[dense].get<0>()[p] = st.g[p * ns + s];
    }
    for (std::size_t a = 0; a < 3; ++a) gradh[dense].get<0>()[a] = st.grad[a * ns + s];
    phih[dense] = st.phi[s];
    delsqh[dense] = st.delsq[s];
    ++dense;
  });
  f.fill_from(fh.data());
  g.fill_from(gh.data());
  grad.fill_from(gradh.data());
  phi.fill_from(phih.data());
  delsq.fill_from(delsqh.data());

  tessera::for_each(executor, CollideKernel{k}, f, g, tessera::read_only(phi), tessera::read_only(grad),
                    tessera::read_only(delsq), tessera::write_only(u));

  f.gather_to(fh.data());
  g.gather_to(gh.data());
  u.gather_to(uh.data());
  dense = 0;
  geo.for_each_interior([&](int, int, int, std::size_t s) {
    for (std::size_t p = 0; p < nvel; ++p) {
      st.f[p * ns + s] = fh[dense].get<0>()[p];
      st.g[p * ns + s] = gh[dense].get<0>()[p];
    }
    for (std::size_t a = 0; a < 3; ++a) st.u[a * ns + s] = uh[dense].get<0>()[a];
    ++dense;
  });
}

}  // namespace lb
