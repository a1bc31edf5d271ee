#pragma once
// `in_shared` on the CPU: each launch tile of a block is staged, with the tensor's padding
// around it, in a scratch buffer laid out like the tensor; the kernel gets BlockIterators over
// the scratch; the tiles' interiors are copied back once every tile has run. The same semantics as the CUDA
// shared-memory path, so tests can hold the two to each other and to the global-memory path.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/core/box.hpp"
#include "tessera/core/index.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/site_reduction.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/sched/executor.hpp"
#include "tessera/tensor/block_geometry.hpp"

namespace tessera::detail {

/// Calls f(p) for every point p of box b, x fastest.
template <std::size_t D, typename F>
void for_each_point(const Box<D>& b, F&& f) {
  if (b.empty()) return;
  Index<D> p = b.lo;
  while (true) {
    f(p);
    std::size_t d = 0;
    while (d < D) {
      if (++p.coords[d] < b.hi.coords[d]) break;
      p.coords[d] = b.lo.coords[d];
      ++d;
    }
    if (d == D) return;
  }
}

/// Scratch for one staged tile of a SharedBlockArg; other arguments need none.
template <typename A, std::size_t D>
struct TileStage {
  TileStage(const A&, const Box<D>&) {}
  const A* staged() const { return nullptr; }
  void write_back() {}
};
template <typename T, std::size_t D, Layout L, Access A>
struct TileStage<SharedBlockArg<T, D, L, A>, D> {
  TileStage(const SharedBlockArg<T, D, L, A>& a, const Box<D>& tile) : source(a), origin(tile.lo) {
    const Index<D> pad = a.geometry.padding;
    geometry = make_block_geometry<T, L>(Box<D>(tile.extent()), pad);
    memory.reset(static_cast<std::byte*>(::operator new(geometry.bytes(), std::align_val_t{64})));
    staged_arg = SharedBlockArg<T, D, L, A>{memory.get(), geometry};
    BlockView<T, D, L> from{a.data, a.geometry};
    BlockView<T, D, L> to{memory.get(), geometry};
    for_each_point(Box<D>(tile.extent()).grown(pad), [&](const Index<D>& p) { to.at(p) = from.at(p + origin); });
  }
  const SharedBlockArg<T, D, L, A>* staged() const { return &staged_arg; }
  /// The tile's interior back to the tensor; a read-only stage has nothing to give back.
  void write_back() {
    if constexpr (A != Access::read) {
      BlockView<T, D, L> from{memory.get(), geometry};
      BlockView<T, D, L> to{source.data, source.geometry};
      for_each_point(Box<D>(geometry.interior.extent()), [&](const Index<D>& p) { to.at(p + origin) = from.at(p); });
    }
  }

  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  SharedBlockArg<T, D, L, A> source;
  Index<D> origin;
  BlockGeometry<D> geometry{};
  std::unique_ptr<std::byte, Free> memory;
  SharedBlockArg<T, D, L, A> staged_arg{};
};

/// Whether an argument's stage goes back to the tensor after the launch.
template <typename A>
constexpr bool writes_back_stage() {
  if constexpr (is_shared_block_arg<A>::value)
    return A::access != Access::read;
  else
    return false;
}

/// Per-site argument inside a staged tile: a BlockIterator for staged tensors, an
/// IndexedIterator (at the global-block position) for the others, values as they are.
template <typename T, std::size_t D, Layout L, Access A>
BlockIterator<T, D, L, Extent<D>, A> tile_site_arg(const SharedBlockArg<T, D, L, A>&,
                                                   const TileStage<SharedBlockArg<T, D, L, A>, D>& s,
                                                   const LaunchShape<D>&, const Index<D>& in_tile, const Index<D>&) {
  return BlockIterator<T, D, L, Extent<D>, A>(s.staged()->data, s.geometry, in_tile);
}
template <typename A, std::size_t D>
decltype(auto) tile_site_arg(const A& a, const TileStage<A, D>&, const LaunchShape<D>& launch, const Index<D>&,
                             const Index<D>& local) {
  return site_arg(a, launch, local);
}

template <std::size_t D, typename F, typename... A>
void run_block_on_cpu_shared(Executor* executor, const ExecOptions& options, const LaunchShape<D>& launch,
                             const Extent<D>& n, F& kernel, const A&... args) {
  static_assert(count_reduce_block_args<A...>() == 0,
                "reduce_into cannot be combined with in_shared arguments: stage the tensors, or reduce in a second kernel");
  Extent<D> tile;
  Extent<D> tiles;
  for (std::size_t d = 0; d < D; ++d) {
    tile.sizes[d] = d < 3 ? std::max<std::size_t>(1, options.block[d]) : 1;
    tile.sizes[d] = std::min(tile.sizes[d], std::max<std::size_t>(1, n.sizes[d]));
    tiles.sizes[d] = (n.sizes[d] + tile.sizes[d] - 1) / tile.sizes[d];
  }
  if (n.volume() == 0) return;
  // Two phases, so that no tile writes its interior back while a neighbour is still staging it as
  // padding: every tile sees the values from before the launch, and the result does not depend on
  // the order in which tiles run. With only read-only stages (in_shared(read_only(t))) nothing is
  // written back, and each tile's stages go as soon as it has run.
  using Stages = std::tuple<TileStage<A, D>...>;
  constexpr bool writes_back = (writes_back_stage<A>() || ...);
  const std::size_t count = tiles.volume();
  std::vector<std::optional<Stages>> staged(writes_back ? count : 0);
  auto run_tile = [&](std::size_t t) {
    const Index<D> ti = tiles.delinear(t);
    Box<D> box;
    for (std::size_t d = 0; d < D; ++d) {
      box.lo.coords[d] = ti.coords[d] * static_cast<std::int64_t>(tile.sizes[d]);
      box.hi.coords[d] = std::min<std::int64_t>(box.lo.coords[d] + static_cast<std::int64_t>(tile.sizes[d]),
                                                static_cast<std::int64_t>(n.sizes[d]));
    }
    auto run = [&](const Stages& stages) {
      for_each_point(Box<D>(box.extent()), [&](const Index<D>& in_tile) {
        const Index<D> local = in_tile + box.lo;
        std::apply([&](const auto&... s) { kernel(tile_site_arg(args, s, launch, in_tile, local)...); }, stages);
      });
    };
    if constexpr (writes_back)
      run(staged[t].emplace(TileStage<A, D>(args, box)...));
    else
      run(Stages(TileStage<A, D>(args, box)...));
  };
  auto write_back = [&](std::size_t t) {
    std::apply([](auto&... s) { (s.write_back(), ...); }, *staged[t]);
    staged[t].reset();
  };
  if (executor != nullptr && count > 1) {
    executor->parallel_for(0, count, run_tile, 1);
    if constexpr (writes_back) executor->parallel_for(0, count, write_back, 1);
  } else {
    for (std::size_t t = 0; t < count; ++t) run_tile(t);
    if constexpr (writes_back)
      for (std::size_t t = 0; t < count; ++t) write_back(t);
  }
}

}  // namespace tessera::detail
