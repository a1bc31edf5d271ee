#pragma once
// One kernel body for CPU and GPU. A kernel is called once per group with a Group; inside it,
// `items` runs a region once per item and ends with a barrier. On a GPU the group is a CUDA
// block: every thread runs the body, `items` calls the region for its own thread and then
// __syncthreads(). On a CPU one thread runs the body and `items` is a loop over the group's
// items, whose end is the barrier. So code between regions must be uniform across the group (the
// same on every item), and values one item hands to another go through `shared` memory, as in
// CUDA. PREMA §3.1.5's parallel_region, without macros.

#include <tessera/core/host_device.hpp>
#include <tessera/exec/grid.hpp>

#include <cstddef>

namespace tessera {

/// An item of a group: its local id in the group and its global id in the grid.
struct Item {
  Dim3 local;
  Dim3 global;
  /// The local id flattened x-fastest, for indexing shared memory.
  std::size_t local_linear = 0;
};

/// What a kernel sees of the group it runs for.
///
///   struct BlockSum {  // each group sums its 128 values of x into sums[group]
///     TESSERA_HOST_DEVICE void operator()(const tessera::Group& g, const double* x, double* sums) const {
///       double* s = g.shared<double>();
///       g.items([&](const tessera::Item& it) { s[it.local.x] = x[it.global.x]; });
///       for (std::size_t half = g.size().x / 2; half > 0; half /= 2)
///         g.items([&](const tessera::Item& it) { if (it.local.x < half) s[it.local.x] += s[it.local.x + half]; });
///       g.items([&](const tessera::Item& it) { if (it.local.x == 0) sums[g.id().x] = s[0]; });
///     }
///   };
class Group {
public:
  TESSERA_HOST_DEVICE Group(Dim3 id, Dim3 count, Dim3 size, void* shared) noexcept
      : id_(id), count_(count), size_(size), shared_(shared) {}

  /// This group's id in the grid.
  TESSERA_HOST_DEVICE Dim3 id() const noexcept { return id_; }
  /// Groups in the grid.
  TESSERA_HOST_DEVICE Dim3 count() const noexcept { return count_; }
  /// Items in each group.
  TESSERA_HOST_DEVICE Dim3 size() const noexcept { return size_; }
  /// The kernel's shared scratch region (Task::shared_bytes for a task), one per group: CUDA
  /// shared memory on a GPU, a buffer reused from group to group on a CPU. Uninitialised at the
  /// group's start.
  template <class T>
  TESSERA_HOST_DEVICE T* shared() const noexcept {
    return static_cast<T*>(shared_);
  }

  /// Runs `region(item)` for every item of the group, then waits for all of them (a barrier):
  /// what one item wrote to shared memory in a region, every item may read in the next.
  TESSERA_NO_EXEC_CHECK
  template <class Region>
  TESSERA_HOST_DEVICE void items(Region&& region) const {
#if TESSERA_ON_DEVICE
    Item it;
    it.local = Dim3{threadIdx.x, threadIdx.y, threadIdx.z};
    it.global = Dim3{id_.x * size_.x + threadIdx.x, id_.y * size_.y + threadIdx.y, id_.z * size_.z + threadIdx.z};
    it.local_linear = threadIdx.x + size_.x * (threadIdx.y + size_.y * threadIdx.z);
    region(static_cast<const Item&>(it));
    __syncthreads();
#else
    Item it;
    for (std::size_t z = 0; z < size_.z; ++z)
      for (std::size_t y = 0; y < size_.y; ++y)
        for (std::size_t x = 0; x < size_.x; ++x) {
          it.local = Dim3{x, y, z};
          it.global = Dim3{id_.x * size_.x + x, id_.y * size_.y + y, id_.z * size_.z + z};
          it.local_linear = x + size_.x * (y + size_.y * z);
          region(static_cast<const Item&>(it));
        }
#endif
  }

private:
  Dim3 id_, count_, size_;
  void* shared_;
};

}  // namespace tessera
