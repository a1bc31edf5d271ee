// DOC tensor-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::MemoryManager memory(devices);

  // 8 x 6 floats in 2 x 1 partitions (spread over the accelerators), each split in 1 x 2
  // sub-partitions: 4 blocks of 4 x 3, with one site of padding around each.
  tessera::TensorOptions<2> options;
  options.partitions = {2, 1};
  options.sub_partitions = {1, 2};
  options.with_padding(1).named("u");
  tessera::Tensor<float, 2> u(memory, {8, 6}, options);

  std::vector<float> init(u.size().volume());
  for (std::size_t k = 0; k < init.size(); ++k) init[k] = static_cast<float>(k);  // u(x, y) = x + 8 y
  u.fill_from(init.data());
  u.load_boundary(tessera::ZeroGradient{});  // outer padding: copy of the nearest face site
  u.exchange_padding();                      // inner padding: copy of the neighbour's site

  // Each block's own copy of every site of its padded box holds u at the nearest site of the domain.
  int wrong = 0;
  auto h = u.host(tessera::Access::read);
  for (std::size_t b = 0; b < u.num_blocks(); ++b) {
    const tessera::Box<2> interior = u.geometry(b).interior;
    tessera::for_each_index(interior.grown(1), [&](const tessera::Index<2>& p) {
      const std::int64_t x = std::clamp<std::int64_t>(p[0], 0, 7), y = std::clamp<std::int64_t>(p[1], 0, 5);
      wrong += h.block(b).at(p - interior.lo) != static_cast<float>(x + 8 * y);
    });
  }
  std::printf("tensor: %zu blocks, %d sites wrong\n", u.num_blocks(), wrong);
  return wrong == 0 ? 0 : 1;
}
// DOC tensor-page end
