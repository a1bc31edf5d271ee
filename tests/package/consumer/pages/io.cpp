// DOC io-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/io.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdio>
#include <vector>

namespace io = tessera::io;

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);
  const std::size_t nx = 48, ny = 32;
  std::vector<double> rho(nx * ny), back(nx * ny);
  for (std::size_t k = 0; k < rho.size(); ++k) rho[k] = 1.0 + 1e-3 * static_cast<double>(k);

  // Saved from two partitions, restored into one in another layout: the file holds the dense array.
  tessera::TensorOptions<2> slabs;
  slabs.partitions = {1, 2};
  tessera::Tensor<double, 2> saved(memory, {nx, ny}, slabs);
  saved.fill_from(rho.data());
  io::CheckpointScalars scalars;
  scalars.set("time", 0.125);
  scalars.set("step", 40);
  io::save_checkpoint("io-page.ckpt", saved, scalars);

  tessera::Tensor<double, 2, tessera::Strided> restored(memory, {nx, ny});
  const io::CheckpointScalars r = io::load_checkpoint("io-page.ckpt", restored);
  restored.gather_to(back.data());
  std::remove("io-page.ckpt");

  const bool ok = back == rho && r.real("time") == 0.125 && r.integer("step") == 40;
  std::printf("io: %zu x %zu sites and 2 scalars %s (PNG %s, HDF5 %s in this build)\n", nx, ny,
              ok ? "restored bit for bit" : "WRONG", io::png_supported() ? "on" : "off",
              io::hdf5_supported() ? "on" : "off");
  return ok ? 0 : 1;
}
// DOC io-page end
