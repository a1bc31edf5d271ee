#pragma once
// Internal: what a loops Context keeps between chains (the loops recorded, the balancer, the
// graphs built), shared by the chain (chain.cpp) and the overlapped tiles (overlapped_tiles.cpp).

#include "balancer.hpp"
#include "overlapped_tiles.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec/access_graph.hpp>
#include <tessera/loops/block.hpp>
#include <tessera/loops/detail/loop_record.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera::loops::detail {

class ChainState {
 public:
  ChainState(DeviceSet& d, Executor& e, const ContextOptions& o) : devices(d), executor(e), memory(d), options(o) {}
  DeviceSet& devices;
  Executor& executor;
  MemoryManager memory;
  ContextOptions options;
  std::vector<std::unique_ptr<LoopRecord>> loops;
  std::size_t executed = 0;
  std::uint64_t bytes_required = 0;
  std::size_t last_tiles = 0;
  int last_tile_rows = 0;

  std::vector<LoopRecord*> current;  // the loops of the chain running: its nodes find them here
  std::size_t graphs_built = 0;

  // With accelerators: the participants (the CPU workers as one when hybrid, then each
  // accelerator), every loop's split among them, and each slab node's measured run.
  static constexpr std::size_t host_participant = ~std::size_t{0};
  std::unique_ptr<Balancer> balancer;
  std::vector<std::size_t> participant_device;         // accelerator index, or host_participant
  std::vector<std::vector<int>> splits;                // per loop of the chain being run
  std::map<std::string, std::vector<int>> last_split;  // by loop name, as last run
  // When the chain runs as overlapped tiles (ContextOptions::overlapped_tiles): participant p
  // owns outermost indices [overlap_cuts[p], overlap_cuts[p + 1]), and runs overlap_tiles[p].
  std::vector<int> overlap_cuts;
  std::vector<OverlappedTile> overlap_tiles;
  struct SlabTime {
    std::size_t loop = 0, participant = 0;
    int rows = 0;
    double seconds = 0;                   // the host's clock for CPU slabs, the device's for device slabs
    std::function<double()> gpu_seconds;  // a GPU slab's, read once the chain has run
    /// Once the chain has run: a GPU slab's time from its events, into `seconds`.
    void read_gpu_clock() {
      if (!gpu_seconds) return;
      seconds = gpu_seconds();
      gpu_seconds = nullptr;
    }
  };

  // The graphs of the last few chain shapes, the most recently run first: a time loop records
  // the same chain every step, or a few in turn (CloverLeaf's sweeps alternate x-y and y-x), and
  // runs them again. Each keeps its Buffers alive until dropped.
  struct BuiltChain {
    std::vector<std::byte> shape;
    std::unique_ptr<AccessGraph> graph;
    std::vector<SlabTime> times;  // per slab node of `graph`, with a balancer
  };
  static constexpr std::size_t graphs_kept = 4;
  std::vector<std::unique_ptr<BuiltChain>> built;
};

/// Each declared buffer's base where a node runs, in a loop's dataset order (`slot`: each
/// dataset's declaration).
inline std::vector<void*> bases_of(const NodeData& d, const std::vector<std::size_t>& slot) {
  std::vector<void*> bases;
  bases.reserve(slot.size());
  for (std::size_t k : slot) bases.push_back(d.base(k));
  return bases;
}

/// Whether every dataset of the chain is read at the site's own index (no strided stencils).
inline bool one_spacing(const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  return std::all_of(loops.begin(), loops.end(), [](const auto& loop) {
    return std::all_of(loop->dats.begin(), loop->dats.end(), [](const DatUse& u) { return u.maps_identity(); });
  });
}

/// The balancer's key for a chain run as overlapped tiles.
inline const std::string overlapped_key = "overlapped tiles";

/// Cuts and tiles for the chain as overlapped tiles (OPS's Algorithm 2, steps 2-4), from the
/// balancer's split of the whole chain; false, with nothing planned, where the chain cannot run
/// so (ContextOptions::overlapped_tiles off, strided stencils, a reducing loop extended, a part
/// owning no row of a dataset the chain writes).
bool plan_overlapped_tiles(ChainState& st, const std::vector<std::unique_ptr<LoopRecord>>& loops);
/// Adds the planned chain to `g` (Algorithm 2, steps 5-7); returns the tiles added, whose times
/// go to `times`.
std::size_t add_overlapped_tiles(ChainState& st, AccessGraph& g, const std::vector<std::unique_ptr<LoopRecord>>& loops,
                                 std::vector<ChainState::SlabTime>* times);
/// After an overlapped chain: each participant's time on its tile, to the balancer.
void record_overlapped_times(ChainState& st, std::vector<ChainState::SlabTime>& times);

}  // namespace tessera::loops::detail
