#pragma once
// Blocks, stencils and ranges of the loops front end (OPS's ops_block, ops_stencil and the
// iteration range of ops_par_loop), and the Context that records loops into a lazy chain.

#include <tessera/memory/access.hpp>
#include <tessera/memory/buffer.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace tessera {
class DeviceSet;
class Executor;
class MemoryManager;
}  // namespace tessera

namespace tessera::loops {

/// A point of a stencil: an offset per dimension (unused dimensions are 0).
using Offset = std::array<int, 3>;

/// The neighbours a loop reads through one dataset argument, as offsets from the site.
///
///   tessera::loops::Stencil five(2, {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}}, "5pt");
class Stencil {
 public:
  /// Throws tessera::Error for dims outside 1..3 or no points.
  Stencil(int dims, std::vector<Offset> points, std::string name = "stencil");
  Stencil(int dims, std::initializer_list<Offset> points, std::string name = "stencil")
      : Stencil(dims, std::vector<Offset>(points), std::move(name)) {}

  int dims() const noexcept { return dims_; }
  const std::vector<Offset>& points() const noexcept { return points_; }
  const std::string& name() const noexcept { return name_; }
  bool contains(const Offset& o) const noexcept;
  /// The smallest and largest offset in dimension d.
  int low(int d) const noexcept { return low_[d]; }
  int high(int d) const noexcept { return high_[d]; }

 private:
  int dims_;
  std::vector<Offset> points_;
  std::string name_;
  std::array<int, 3> low_{}, high_{};
};

/// A stencil whose offsets apply at a mapped index of a dataset on a finer or coarser grid, or of
/// fewer dimensions (OPS's strided, restriction and prolongation stencils). Read-only.
///
///   // celldx(i) of a 1-D x array (size {nx, 1}) from a 2-D loop: stride 0 pins y at row 0.
///   auto along_x = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}}, "x"), {1, 0, 1});
///   // restriction: a coarse loop reads the fine grid around site 2i.
///   auto fine = tl::StridedStencil::strided(tl::Stencil(2, {{0, 0, 0}, {1, 0, 0}}, "r"), {2, 2, 1});
///   // prolongation: a fine loop reads the coarse grid at i / 2.
///   auto coarse = tl::StridedStencil::prolong(tl::Stencil(2, {{0, 0, 0}}, "p"), {2, 2, 1});
class StridedStencil {
 public:
  /// Dataset index in dimension d = site[d] * stride[d] + offset. Throws tessera::Error for a
  /// negative stride.
  static StridedStencil strided(Stencil points, Offset stride);
  /// Dataset index in dimension d = floor(site[d] / stride[d]) + offset. Throws tessera::Error
  /// for a stride below 1.
  static StridedStencil prolong(Stencil points, Offset stride);

  const Stencil& points() const noexcept { return points_; }
  const std::string& name() const noexcept { return points_.name(); }
  const Offset& stride() const noexcept { return stride_; }
  bool divides() const noexcept { return divide_; }
  /// The dataset index a site's index maps to in dimension d (before the offsets).
  int map(int d, int site) const noexcept {
    if (!divide_) return site * stride_[d];
    const int q = site / stride_[d];
    return (site % stride_[d] != 0 && site < 0) ? q - 1 : q;
  }

 private:
  StridedStencil(Stencil points, Offset stride, bool divide);
  Stencil points_;
  Offset stride_;
  bool divide_;
};

/// A half-open iteration range per dimension: begin[d] <= i_d < end[d] (global indices).
struct Range {
  std::array<int, 3> begin{0, 0, 0};
  std::array<int, 3> end{1, 1, 1};
  /// OPS's flat form {x0, x1, y0, y1, z0, z1} for `dims` dimensions.
  static Range of(int dims, std::initializer_list<int> bounds);
};

namespace detail {
struct LoopRecord;
class ChainState;
}  // namespace detail

/// How a chain runs.
struct ContextOptions {
  /// Cache-blocking on the host: the chain runs in tiles along the outermost dimension, each
  /// loop's tile boundary skewed back from the one before by what its stencils and writes need,
  /// so a tile's rows stay in cache across the whole chain. Results are bitwise those untiled.
  /// With accelerators, only the host's part of a hybrid chain is tiled.
  bool tiled = false;
  /// Outermost indices per tile; 0: as many as let one tile's rows of every dataset the chain
  /// touches span `tile_bytes`, and at least twice the chain's skew.
  int tile_rows = 0;
  /// 0: four times the L2 cache hwloc reports, at most a quarter of the L3 (8 MiB without
  /// hwloc). On the 2-core development VM (2 MiB L2) a 4096² Jacobi chain ran fastest with
  /// tiles of 4-8 MiB (bench/results/README.md).
  std::size_t tile_bytes = 0;
  /// With accelerators: the CPU workers take a part of every loop too, beside each accelerator
  /// (OPS's hybrid CPU+GPU scheme). Without accelerators the workers have every loop anyway.
  bool hybrid = false;
  /// With accelerators: each loop's split along its outermost dimension follows the measured
  /// speed of every participant on that loop, so that all finish together; false: equal parts.
  bool balance = true;
  /// Weight of the newest chain in each participant's moving-average time per row, in (0, 1].
  double balance_rate = 0.5;
  /// A new split replaces a loop's last one only when it would finish this much sooner (a
  /// fraction): moving rows costs copies and a new graph. 0: every chain takes the ideal split.
  double balance_threshold = 0.03;
  /// true: every loop (by name) has a split of its own, balanced on its own times (OPS's
  /// per-loop scheme: each loop as fast as it can be, but rows change hands between loops whose
  /// balance differs). false: one split of the outermost indices for the whole chain, balanced
  /// on the chain's times, so datasets stay where they are and only halo rows move.
  bool split_each_loop = true;
  /// With accelerators: OPS's tiled hybrid scheme (its Algorithms 2 and 3). Each participant
  /// runs the whole chain over one tile: its part of the outermost indices, extended for every
  /// loop by the rows later loops of the tile read, so the rows along the cuts are computed on
  /// both sides (redundantly) and the participants exchange halo rows once per chain rather than
  /// between loops. The split is balanced on the whole chain's times. Results are bitwise those
  /// of the plain chain. A chain it cannot serve (strided stencils, a reducing loop that a later
  /// loop would need computed past its part) runs per loop instead.
  bool overlapped_tiles = false;
  /// An untiled chain on the host whose loops have at most this many sites each runs on the
  /// calling thread, loop after loop: waking the workers and cutting such loops into slabs would
  /// cost more than the loops themselves (OPS-style codes launch millions of small loops).
  /// 0: every chain goes to the workers.
  std::int64_t inline_sites = 4096;
};

/// One participant's part of a loop's outermost range: "host" (the CPU workers) or a device.
struct Share {
  std::string participant;
  int rows = 0;
};

/// Where loops run and the chain they are recorded into. `devices` "host": CPU workers; "sim:N":
/// one part of every loop per accelerator, and one for the CPU workers when hybrid, sized by the
/// balancer. Loops run lazily: when a reduction's result or a dataset's values are asked for,
/// or on execute().
class Context {
 public:
  Context(DeviceSet& devices, Executor& executor, const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Runs every recorded loop (dependencies from access modes and stencils), then clears the chain.
  void execute();
  /// Loops recorded and not yet run.
  std::size_t pending() const noexcept;
  /// Loops run since construction (each counts once, whatever the parts it ran in).
  std::size_t executed() const noexcept;
  /// Bytes the loops run since construction had to move at the least: per dataset argument, its
  /// elements over the loop's range once per direction (read, written, or both). Divided by a
  /// run's time: its effective bandwidth, as OPS and CloverLeaf report it.
  std::uint64_t bytes_required() const noexcept;
  /// Graphs built for chains: a chain of the same shape as one of the last four (same loops,
  /// ranges, datasets and stencils; kernels and global values may differ) reuses its graph.
  std::size_t graphs_built() const noexcept;
  /// Tiles the last chain was built in (0 untiled; overlapped tiles: one per participant with rows),
  /// and their height in outermost indices (cache tiles only).
  std::size_t last_tiles() const noexcept;
  int last_tile_rows() const noexcept;
  const ContextOptions& options() const noexcept;
  /// How the loop named `loop` was last split among the participants (host first when hybrid,
  /// then each accelerator): rows per participant; empty without accelerators or before the loop
  /// first ran. With split_each_loop false, the loop's share of the chain's cuts.
  std::vector<Share> split_of(const std::string& loop) const;

  MemoryManager& memory() noexcept;
  DeviceSet& devices() noexcept;
  Executor& executor() noexcept;

  void record(std::unique_ptr<detail::LoopRecord> loop);

 private:
  void build(const std::vector<std::unique_ptr<detail::LoopRecord>>& loops);
  std::unique_ptr<detail::ChainState> state_;
};

/// A structured block of 1 to 3 dimensions on which datasets are declared and loops run.
class Block {
 public:
  /// Throws tessera::Error for dims outside 1..3.
  Block(Context& context, int dims, std::string name = "block");
  int dims() const noexcept { return dims_; }
  const std::string& name() const noexcept { return name_; }
  Context& context() const noexcept { return *context_; }

 private:
  Context* context_;
  int dims_;
  std::string name_;
};

}  // namespace tessera::loops
