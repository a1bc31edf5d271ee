#pragma once
// Block-level kernel arguments: what for_each turns each argument into once a block's memory
// is in place, and what each becomes for one site (an iterator, or the value itself).

#include <cstddef>
#include <type_traits>

#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/layout/layout.hpp"
#include "tessera/memory/access.hpp"
#include "tessera/tensor/block_geometry.hpp"
#include "tessera/tensor/block_iterator.hpp"
#include "tessera/tensor/indexed_iterator.hpp"

namespace tessera::detail {

/// A tensor argument: one block's memory on the device the kernel runs on, accessed as A.
template <typename T, std::size_t D, Layout L, Access A = Access::read_write>
struct TensorBlockArg {
  using value_type = T;
  using layout = L;
  static constexpr std::size_t dims = D;
  static constexpr Access access = A;
  std::byte* data;
  BlockGeometry<D> geometry;
};
/// A tensor argument staged in shared memory (or per-tile scratch on the CPU), accessed as A
/// (read: staged, never written back). On CUDA the stage is `stage` (a full launch tile plus
/// padding) at `stage_offset` bytes into dynamic shared memory.
template <typename T, std::size_t D, Layout L, Access A = Access::read_write>
struct SharedBlockArg {
  using value_type = T;
  using layout = L;
  static constexpr std::size_t dims = D;
  static constexpr Access access = A;
  std::byte* data;
  BlockGeometry<D> geometry;
  BlockGeometry<D> stage{};
  std::size_t stage_offset = 0;
};
/// Anything else: passed to the kernel by value.
template <typename V>
struct ValueArg {
  V value;
};

/// A uniform argument (tessera::uniform): every site reads `*value`, in the memory of the device
/// the kernel runs on.
template <typename T>
struct UniformArg {
  const T* value;
};
/// The address of the one interior site of a one-site block of T laid out as L at `data`.
template <typename T, std::size_t D, Layout L>
T* only_site(std::byte* data, const BlockGeometry<D>& geometry) noexcept {
  return &BlockView<T, D, L>{data, geometry}.at(Index<D>{});
}
/// An argument as a block run on the CPU takes it: a uniform one read once, at the block's start
/// (a load through the pointer would be repeated after every store of the same type, which
/// stops the vectoriser), everything else unchanged.
template <typename A>
const A& read_uniform(const A& a) noexcept {
  return a;
}
template <typename T>
ValueArg<T> read_uniform(const UniformArg<T>& a) noexcept {
  return ValueArg<T>{*a.value};
}

template <typename A>
struct is_tensor_block_arg : std::false_type {};
template <typename T, std::size_t D, Layout L, Access A>
struct is_tensor_block_arg<TensorBlockArg<T, D, L, A>> : std::true_type {};
template <typename A>
struct is_shared_block_arg : std::false_type {};
template <typename T, std::size_t D, Layout L, Access A>
struct is_shared_block_arg<SharedBlockArg<T, D, L, A>> : std::true_type {};

/// The iterator at block-local `local` (tensors), or the value.
template <typename T, std::size_t D, Layout L, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE IndexedIterator<T, D, L, A> site_arg(const TensorBlockArg<T, D, L, A>& a,
                                                                             const LaunchShape<D>& launch,
                                                                             const Index<D>& local) noexcept {
  return IndexedIterator<T, D, L, A>(a.data, a.geometry, launch, local);
}
template <typename V, std::size_t D>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const V& site_arg(const ValueArg<V>& a, const LaunchShape<D>&,
                                                          const Index<D>&) noexcept {
  return a.value;
}

template <typename T, std::size_t D>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const T& site_arg(const UniformArg<T>& a, const LaunchShape<D>&,
                                                           const Index<D>&) noexcept {
  return *a.value;
}

/// Moves a row-start iterator `n` sites along x (values pass through).
template <typename T, std::size_t D, Layout L, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE IndexedIterator<T, D, L, A> along_x(const IndexedIterator<T, D, L, A>& it,
                                                                         std::ptrdiff_t n) noexcept {
  return it.offset(0, n);
}
template <typename V>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const V& along_x(const V& v, std::ptrdiff_t) noexcept {
  return v;
}
template <typename T, std::size_t D, Layout L, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE IndexedIterator<T, D, L, A> tile_aligned(const IndexedIterator<T, D, L, A>& it) noexcept {
  return it.tile_aligned();
}
template <typename V>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const V& tile_aligned(const V& v) noexcept {
  return v;
}
template <typename T, std::size_t D, Layout L, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE IndexedIterator<T, D, L, A> tile_start(const IndexedIterator<T, D, L, A>& it) noexcept {
  return it.tile_start();
}
template <typename V>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const V& tile_start(const V& v) noexcept {
  return v;
}

/// Site `lane` of the strip `strip` strips of `strip_sites` on from a strip-start iterator: for
/// Tiled records (whose tiles divide the strip) the address is linear in `strip` with any
/// `lane`; for other layouts it is `strip * strip_sites + lane` sites along x.
template <typename T, std::size_t D, Layout L, Access A>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE IndexedIterator<T, D, L, A> strip_lane(const IndexedIterator<T, D, L, A>& it,
                                                                            std::ptrdiff_t strip_sites,
                                                                            std::ptrdiff_t strip,
                                                                            std::ptrdiff_t lane) noexcept {
  if constexpr (is_tiled<L>::value && !std::is_arithmetic_v<T>) {
    constexpr std::ptrdiff_t V = static_cast<std::ptrdiff_t>(L::width);
    return it.tile_lane(strip * (strip_sites / V) + lane / V, lane % V);
  } else {
    return it.offset(0, strip * strip_sites + lane);
  }
}
template <typename V>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE const V& strip_lane(const V& v, std::ptrdiff_t, std::ptrdiff_t,
                                                            std::ptrdiff_t) noexcept {
  return v;
}

}  // namespace tessera::detail
