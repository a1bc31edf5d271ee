// OPS's tiled hybrid scheme as graph nodes: the plan (cuts from the balancer, a tile per
// participant), the exchange and tile nodes, and the times back to the balancer.
#include "chain_state.hpp"

#include <tessera/device/stream.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <optional>

namespace tessera::loops::detail {
namespace {

/// Buffer rows participant p owns of `u`'s buffer in an overlapped chain.
RowRange owned_rows(const ChainState& st, std::size_t p, const DatUse& u) {
  const std::size_t n = st.overlap_cuts.size() - 1, rows = u.buffer.rows();
  auto row = [&](int outer) {
    return std::size_t(std::clamp<std::int64_t>(std::int64_t(outer) - u.first_row, 0, std::int64_t(rows)));
  };
  return {p == 0 ? 0 : row(st.overlap_cuts[p]), p + 1 == n ? rows : row(st.overlap_cuts[p + 1])};
}

}  // namespace

bool plan_overlapped_tiles(ChainState& st, const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  st.overlap_cuts.clear();
  st.overlap_tiles.clear();
  if (!st.balancer || !st.options.overlapped_tiles || !one_spacing(loops)) return false;
  int first = loops[0]->outer_begin(), last = loops[0]->outer_end();
  for (const auto& loop : loops) {
    first = std::min(first, loop->outer_begin());
    last = std::max(last, loop->outer_end());
  }
  std::vector<int> cuts{first};
  for (int rows : st.balancer->split(overlapped_key, last - first)) cuts.push_back(cuts.back() + rows);
  const std::size_t n = cuts.size() - 1;
  std::vector<OverlappedTile> tiles;
  for (std::size_t p = 0; p < n; ++p) {
    // The first and last participants own the rows below and above every loop's range too.
    std::optional<OverlappedTile> tile =
        overlapped_tile(loops, p == 0 ? INT_MIN : cuts[p], p + 1 == n ? INT_MAX : cuts[p + 1]);
    if (!tile) return false;
    tiles.push_back(std::move(*tile));
  }
  st.overlap_cuts = std::move(cuts);
  st.overlap_tiles = std::move(tiles);
  // A tile may write past its own rows only as scratch, declared through the rows it owns: where
  // a participant owns none of a dataset the chain writes and its tile touches (a grid thinner
  // than the parts), the tiles could not run side by side; run per loop instead.
  std::vector<const void*> written;
  for (const auto& loop : loops)
    for (const DatUse& u : loop->dats)
      if (u.access != Access::read) written.push_back(u.buffer.key());
  for (std::size_t p = 0; p < n; ++p) {
    if (st.overlap_cuts[p] == st.overlap_cuts[p + 1]) continue;
    for (std::size_t l = 0; l < loops.size(); ++l) {
      if (st.overlap_tiles[p].loops[l].begin >= st.overlap_tiles[p].loops[l].end) continue;
      for (const DatUse& u : loops[l]->dats) {
        const RowRange own = owned_rows(st, p, u);
        if (own.begin >= own.end && std::find(written.begin(), written.end(), u.buffer.key()) != written.end()) {
          st.overlap_cuts.clear();
          st.overlap_tiles.clear();
          return false;
        }
      }
    }
  }
  return true;
}

/// OPS's Algorithm 2, steps 5-7: first each participant's inputs from before the chain that
/// others hold (a node with nothing to run but its declared reads: the memory layer moves the
/// dirty rows), then each participant's tile as one node, declaring only its own rows of what
/// the chain writes. So tiles wait for the exchange and run side by side; the rows a tile
/// computes past its own are scratch in its replica, which the neighbour's declared writes of
/// those rows mark stale.
std::size_t add_overlapped_tiles(ChainState& st, AccessGraph& g, const std::vector<std::unique_ptr<LoopRecord>>& loops,
                                 std::vector<ChainState::SlabTime>* times) {
  struct Used {
    const DatUse* use;
    bool written;
  };
  std::vector<Used> buffers;  // each buffer the chain touches, once
  for (const auto& loop : loops)
    for (const DatUse& u : loop->dats) {
      auto it = std::find_if(buffers.begin(), buffers.end(),
                             [&](const Used& b) { return b.use->buffer.key() == u.buffer.key(); });
      if (it == buffers.end()) it = buffers.insert(buffers.end(), Used{&u, false});
      it->written = it->written || u.access != Access::read;
    }
  const std::size_t n = st.overlap_tiles.size();
  auto input_of = [&](std::size_t p, const void* key) -> std::optional<RowRange> {
    for (const OverlappedTile::Input& in : st.overlap_tiles[p].inputs)
      if (in.buffer == key) return in.rows;
    return std::nullopt;
  };
  // What the tile of p declares of a buffer: read-write its own rows of what the chain writes
  // (plan_overlapped_tiles made sure it owns some of each it touches), else read its inputs: a
  // dataset nothing in the chain writes is read only as it was before the chain.
  struct Declared {
    Access mode;
    RowRange rows;
  };
  auto declared_of = [&](std::size_t p, const Used& b) -> std::optional<Declared> {
    const RowRange own = owned_rows(st, p, *b.use);
    if (b.written)
      return own.begin < own.end ? std::optional<Declared>(Declared{Access::read_write, own}) : std::nullopt;
    if (const std::optional<RowRange> in = input_of(p, b.use->buffer.key())) return Declared{Access::read, *in};
    return std::nullopt;
  };
  auto participant = [&](std::size_t p) { return st.balancer->participants()[p]; };
  // Every row a tile reads or owns is made valid in its replica here, so that no copy runs
  // while tiles run: a copy from a replica whose scratch rows a tile is overwriting would race.
  std::vector<Node*> exchanges;
  for (std::size_t p = 0; p < n; ++p) {
    if (st.overlap_cuts[p] == st.overlap_cuts[p + 1]) continue;
    std::vector<BufferAccess> exchange;
    for (const Used& b : buffers) {
      const std::optional<Declared> d = declared_of(p, b);
      if (!d) continue;
      RowRange rows = d->rows;
      if (const std::optional<RowRange> in = input_of(p, b.use->buffer.key()))
        rows = RowRange{std::min(rows.begin, in->begin), std::max(rows.end, in->end)};
      exchange.emplace_back(b.use->buffer, Access::read, rows);
    }
    if (exchange.empty()) continue;
    const std::string name = "inputs of the " + participant(p) + " tile";
    if (st.participant_device[p] == ChainState::host_participant)
      exchanges.push_back(&g.host(name, std::move(exchange), [](const NodeData&) {}));
    else
      exchanges.push_back(&g.device(st.devices.accelerator(st.participant_device[p]), name, std::move(exchange),
                                    [](const NodeData&) {}));
  }
  ChainState* chain = &st;
  std::size_t tiles = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (st.overlap_cuts[p] == st.overlap_cuts[p + 1]) continue;
    ++tiles;
    std::vector<BufferAccess> declared;
    std::vector<const void*> keys;
    for (const Used& b : buffers) {
      const std::optional<Declared> d = declared_of(p, b);
      if (!d) continue;
      declared.emplace_back(b.use->buffer, d->mode, d->rows);
      keys.push_back(b.use->buffer.key());
    }
    // Per loop: its rows in this tile, and the declaration of each of its datasets.
    struct TileLoop {
      std::size_t index;
      int begin, end;
      std::vector<std::size_t> slots;
      std::size_t slab;
    };
    std::vector<TileLoop> runs;
    const bool on_host = st.participant_device[p] == ChainState::host_participant;
    const std::size_t host_slab = times->size();
    if (on_host)
      times->push_back(ChainState::SlabTime{0, p, st.overlap_cuts[p + 1] - st.overlap_cuts[p], 0.0, nullptr});
    for (std::size_t l = 0; l < loops.size(); ++l) {
      const OverlappedTile::Rows rows = st.overlap_tiles[p].loops[l];
      if (rows.begin >= rows.end) continue;
      TileLoop run{l, rows.begin, rows.end, {}, host_slab};
      for (const DatUse& u : loops[l]->dats)
        run.slots.push_back(std::size_t(std::find(keys.begin(), keys.end(), u.buffer.key()) - keys.begin()));
      if (!on_host) {
        run.slab = times->size();
        times->push_back(ChainState::SlabTime{l, p, rows.end - rows.begin, 0.0, nullptr});
      }
      runs.push_back(std::move(run));
    }
    const std::string name = participant(p) + " tile";
    Node* tile = nullptr;
    if (on_host) {
      tile = &g.host(name, std::move(declared), [chain, times, runs](const NodeData& d) {
        const auto begin = std::chrono::steady_clock::now();
        const std::size_t workers = std::max<std::size_t>(1, chain->executor.num_workers());
        for (const TileLoop& r : runs) {
          const std::vector<void*> bases = bases_of(d, r.slots);
          LoopRecord* loop = chain->current[r.index];
          const int rows = r.end - r.begin, parts = int(std::min<std::size_t>(workers, std::size_t(rows)));
          chain->executor.parallel_for(
              0, std::size_t(parts),
              [&](std::size_t c) {
                loop->run(r.begin + int(std::int64_t(rows) * int(c) / parts),
                          r.begin + int(std::int64_t(rows) * (int(c) + 1) / parts), bases.data());
              },
              1);
        }
        if (!runs.empty())
          (*times)[runs.front().slab].seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      });
    } else {
      tile = &g.device(
          st.devices.accelerator(st.participant_device[p]), name, std::move(declared),
          [chain, times, runs](const NodeData& d) {
            Stream& stream = d.stream();
            for (const TileLoop& r : runs) {
              LoopRecord* loop = chain->current[r.index];
              const std::vector<void*> bases = bases_of(d, r.slots);
              const std::size_t slab = r.slab;
              tessera::detail::launch_on_stream_timed(
                  stream, [loop] { return loop->name; }, [loop, r, bases] { loop->run(r.begin, r.end, bases.data()); },
                  [times, slab](std::chrono::nanoseconds t) {
                    (*times)[slab].seconds = std::chrono::duration<double>(t).count();
                  },
                  [&](void*) { loop->launch_cuda(stream, r.begin, r.end, bases.data(), &(*times)[slab].gpu_seconds); });
            }
          });
    }
    for (Node* e : exchanges) e->precede(*tile);
  }
  return tiles;
}

void record_overlapped_times(ChainState& st, std::vector<ChainState::SlabTime>& times) {
  const std::size_t n = st.overlap_cuts.size() - 1;
  std::vector<int> rows(n);
  std::vector<double> seconds(n, 0.0);
  for (std::size_t p = 0; p < n; ++p) rows[p] = st.overlap_cuts[p + 1] - st.overlap_cuts[p];
  for (ChainState::SlabTime& t : times) {
    t.read_gpu_clock();
    seconds[t.participant] += t.seconds;
  }
  st.balancer->measured(overlapped_key, rows, seconds);
}

}  // namespace tessera::loops::detail
