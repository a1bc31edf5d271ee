// The lazy chain: loops recorded by par_loop run together when a value is needed. Each loop is
// cut into slabs along its outermost dimension (one per CPU worker on the host, one per
// accelerator otherwise); each slab declares the rows its stencils reach, so the AccessGraph
// orders slab after slab only where rows overlap, and the memory layer moves between devices
// only the rows a slab reads that another device wrote (OPS's dirty halo bookkeeping).
#include "chain_state.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/device/topology.hpp>
#include <tessera/exec/access_graph.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>
#include <tessera/loops/block.hpp>
#include <tessera/loops/detail/loop_record.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace tessera::loops {
namespace detail {

namespace {

// One slab's declarations: a dataset used twice in a loop is declared once, over both reaches.
struct SlabAccesses {
  std::vector<BufferAccess> declared;
  std::vector<std::size_t> slot;  // per dats entry: its declaration
};

SlabAccesses slab_accesses(const LoopRecord& loop, int begin, int end) {
  SlabAccesses out;
  for (const DatUse& u : loop.dats) {
    const RowRange rows = u.rows(begin, end);
    std::size_t k = 0;
    while (k < out.declared.size() && out.declared[k].buffer.key() != u.buffer.key()) ++k;
    if (k == out.declared.size()) {
      out.declared.emplace_back(u.buffer, u.access, rows);
    } else {
      BufferAccess& d = out.declared[k];
      d.rows = RowRange{std::min(d.rows->begin, rows.begin), std::max(d.rows->end, rows.end)};
      if (d.mode != u.access) d.mode = Access::read_write;
    }
    out.slot.push_back(k);
  }
  return out;
}

/// How far (in outermost indices) each loop's tile boundaries trail the first loop's, so that
/// running the chain tile by tile, each tile loop by loop, gives what running it loop by loop
/// gives. For loops k before l touching the same dataset (writes are at the site):
///   l reads (up to offset hi) what k writes: l may only reach rows k has done: shift_l >= shift_k + hi;
///   l writes what k reads (from offset lo): k's next tile still needs the old rows: shift_l >= shift_k - lo;
///   both write: l's rows must stay behind k's: shift_l >= shift_k.
std::vector<int> tile_shifts(const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  std::vector<int> shift(loops.size(), 0);
  for (std::size_t l = 0; l < loops.size(); ++l)
    for (std::size_t k = 0; k < l; ++k)
      for (const DatUse& a : loops[k]->dats)
        for (const DatUse& b : loops[l]->dats) {
          if (a.buffer.key() != b.buffer.key()) continue;
          const bool k_writes = a.access != Access::read, l_writes = b.access != Access::read;
          if (k_writes) shift[l] = std::max(shift[l], shift[k] + std::max(b.high, 0));
          if (l_writes) shift[l] = std::max(shift[l], shift[k] - std::min(a.low, 0));
        }
  return shift;
}

/// Rows whose data (every dataset the chain touches) spans `tile_bytes`; at least twice the
/// chain's skew, since a skewed tile's loops reach that far behind it: a long chain (CloverLeaf's
/// step skews by 37 rows) gains nothing from tiles the skew dwarfs.
int auto_tile_rows(const std::vector<std::unique_ptr<LoopRecord>>& loops, std::size_t tile_bytes, int max_shift) {
  std::vector<const Buffer*> seen;
  std::size_t row_bytes = 0;
  for (const auto& loop : loops)
    for (const DatUse& u : loop->dats)
      if (std::none_of(seen.begin(), seen.end(), [&](const Buffer* b) { return b->key() == u.buffer.key(); })) {
        seen.push_back(&u.buffer);
        row_bytes += u.buffer.row_bytes();
      }
  if (tile_bytes == 0) {
    const std::size_t l2 = cache_bytes(2), l3 = cache_bytes(3);
    tile_bytes = l2 != 0 ? 4 * l2 : std::size_t{8} << 20;
    if (l3 != 0) tile_bytes = std::min(tile_bytes, l3 / 4);
  }
  return std::max({1, int(tile_bytes / std::max<std::size_t>(row_bytes, 1)), 2 * max_shift});
}

/// Everything the graph of a chain is built from: per loop its dimensions, range and dataset
/// uses (Buffer identity, access, reach). Two chains with the same bytes get the same graph.
std::vector<std::byte> chain_shape(const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  std::vector<std::byte> out;
  auto put = [&out](const auto& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  };
  for (const auto& loop : loops) {
    put(loop->dims);
    put(loop->range.begin);
    put(loop->range.end);
    put(loop->dats.size());
    for (const DatUse& u : loop->dats) {
      put(u.buffer.key());
      put(u.access);
      put(u.low);
      put(u.high);
      put(u.stride);
      put(u.divide);
      put(u.first_row);
    }
  }
  return out;
}

/// The balancer's key for a chain split as one (ContextOptions::split_each_loop false).
const std::string chain_key = "chain";

/// How far along the outermost dimension the loop reads past a row it runs.
int read_reach(const LoopRecord& loop) {
  int reach = 0;
  for (const DatUse& u : loop.dats) {
    // A grid of another spacing has rows that line up with no cut: every row may wait.
    if (!u.maps_identity()) return 1 << 30;
    if (u.access != Access::write) reach = std::max({reach, -u.low, u.high});
  }
  return reach;
}

/// Feeds each participant's time on every loop of the chain just run to the balancer. The CPU
/// workers run their slabs side by side, so the host's time is its slabs' total over the
/// workers that ran them.
void record_times(ChainState& st, std::vector<ChainState::SlabTime>& times,
                  const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  const int workers = int(std::max<std::size_t>(1, st.executor.num_workers()));
  const std::size_t n = st.participant_device.size();
  struct Sums {
    std::vector<int> rows;
    std::vector<double> seconds;
  };
  std::map<std::string, Sums> by_key;
  std::vector<double> seconds(loops.size() * n, 0.0);
  std::vector<int> rows(loops.size() * n, 0), slabs(loops.size() * n, 0);
  for (ChainState::SlabTime& t : times) {
    t.read_gpu_clock();
    const std::size_t at = t.loop * n + t.participant;
    seconds[at] += t.seconds;
    rows[at] += t.rows;
    ++slabs[at];
  }
  for (std::size_t l = 0; l < loops.size(); ++l) {
    Sums& sums = by_key[st.options.split_each_loop ? loops[l]->name : chain_key];
    sums.rows.resize(n, 0);
    sums.seconds.resize(n, 0.0);
    for (std::size_t p = 0; p < n; ++p) {
      const std::size_t at = l * n + p;
      if (slabs[at] == 0) continue;
      sums.rows[p] += rows[at];
      sums.seconds[p] += st.participant_device[p] == ChainState::host_participant
                             ? seconds[at] / std::min(slabs[at], workers)
                             : seconds[at];
    }
  }
  for (const auto& [key, sums] : by_key) st.balancer->measured(key, sums.rows, sums.seconds);
}

/// The sites of the chain's largest loop.
std::int64_t largest_loop(const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  std::int64_t sites = 0;
  for (const auto& loop : loops) {
    std::int64_t n = 1;
    for (int d = 0; d < loop->dims; ++d) n *= loop->range.end[d] - loop->range.begin[d];
    sites = std::max(sites, n);
  }
  return sites;
}

/// Loop after loop on this thread, each holding the rows its stencils reach on the host, as the
/// graph's host nodes do. A kernel's exception names its loop as a node's would.
void run_inline(const std::vector<std::unique_ptr<LoopRecord>>& loops) {
  for (const auto& loop : loops) {
    const int b = loop->outer_begin(), e = loop->outer_end();
    SlabAccesses a = slab_accesses(*loop, b, e);
    std::vector<void*> held;
    held.reserve(a.declared.size());
    auto release = [&] {
      for (std::size_t k = held.size(); k-- > 0;) a.declared[k].buffer.release(a.declared[k].mode, *a.declared[k].rows);
    };
    try {
      for (BufferAccess& d : a.declared) held.push_back(d.buffer.request(d.mode, *d.rows).get());
      std::vector<void*> bases;
      bases.reserve(a.slot.size());
      for (std::size_t k : a.slot) bases.push_back(held[k]);
      loop->run(b, e, bases.data());
    } catch (...) {
      release();
      const std::exception_ptr failure = std::current_exception();
      throw NodeError(loop->name, failure, "node '" + loop->name + "' threw: " + describe_exception(failure));
    }
    release();
  }
}

}  // namespace
}  // namespace detail

Context::Context(DeviceSet& devices, Executor& executor, const ContextOptions& options)
    : state_(std::make_unique<detail::ChainState>(devices, executor, options)) {
  if (options.tile_rows < 0)
    throw Error("loops::ContextOptions: tile_rows " + std::to_string(options.tile_rows) +
                "; give a positive height, or 0 to choose it from the cache size");
  if (options.inline_sites < 0)
    throw Error("loops::ContextOptions: inline_sites " + std::to_string(options.inline_sites) +
                "; give a site count, or 0 to send every chain to the workers");
  if (options.overlapped_tiles && devices.num_accelerators() == 0)
    throw Error(
        "loops::ContextOptions: overlapped_tiles needs accelerators (sim:N or cuda) to share the chain with; "
        "on the host alone use tiled for cache blocking");
  if (devices.num_accelerators() > 0) {
    std::vector<std::string> names;
    detail::ChainState& st = *state_;
    if (options.hybrid) {
      names.push_back("host");
      st.participant_device.push_back(detail::ChainState::host_participant);
    }
    for (std::size_t a = 0; a < devices.num_accelerators(); ++a) {
      names.push_back(devices.accelerator(a).name());
      st.participant_device.push_back(a);
    }
    st.balancer = std::make_unique<detail::Balancer>(std::move(names), options.balance_rate, options.balance_threshold);
  }
}
Context::~Context() = default;

MemoryManager& Context::memory() noexcept { return state_->memory; }
DeviceSet& Context::devices() noexcept { return state_->devices; }
Executor& Context::executor() noexcept { return state_->executor; }
std::size_t Context::pending() const noexcept { return state_->loops.size(); }
std::size_t Context::executed() const noexcept { return state_->executed; }
std::uint64_t Context::bytes_required() const noexcept { return state_->bytes_required; }
std::size_t Context::graphs_built() const noexcept { return state_->graphs_built; }
std::size_t Context::last_tiles() const noexcept { return state_->last_tiles; }
int Context::last_tile_rows() const noexcept { return state_->last_tile_rows; }
const ContextOptions& Context::options() const noexcept { return state_->options; }

std::vector<Share> Context::split_of(const std::string& loop) const {
  std::vector<Share> out;
  if (!state_->balancer) return out;
  const auto it = state_->last_split.find(loop);
  if (it == state_->last_split.end()) return out;
  for (std::size_t p = 0; p < it->second.size(); ++p)
    out.push_back(Share{state_->balancer->participants()[p], it->second[p]});
  return out;
}

void Context::record(std::unique_ptr<detail::LoopRecord> loop) { state_->loops.push_back(std::move(loop)); }

void Context::execute() {
  detail::ChainState& st = *state_;
  if (st.loops.empty()) return;
  // Taken out first: a failed chain is dropped, not run again by the next value asked for.
  std::vector<std::unique_ptr<detail::LoopRecord>> loops = std::move(st.loops);
  st.loops.clear();
  st.current.clear();
  if (st.devices.num_accelerators() == 0 && !st.options.tiled &&
      detail::largest_loop(loops) <= st.options.inline_sites) {
    detail::run_inline(loops);
    for (const auto& loop : loops) {
      loop->finish();
      st.bytes_required += loop->bytes_required;
    }
    st.executed += loops.size();
    return;
  }
  for (const auto& loop : loops) st.current.push_back(loop.get());
  std::vector<std::byte> shape = detail::chain_shape(loops);
  const bool overlapped = detail::plan_overlapped_tiles(st, loops);
  if (overlapped) {
    shape.push_back(std::byte{1});
    for (int cut : st.overlap_cuts) {
      const auto* b = reinterpret_cast<const std::byte*>(&cut);
      shape.insert(shape.end(), b, b + sizeof cut);
    }
    for (const auto& loop : loops) {
      std::vector<int>& shares = st.last_split[loop->name];
      shares.clear();
      for (std::size_t p = 0; p + 1 < st.overlap_cuts.size(); ++p)
        shares.push_back(std::max(0, std::min(st.overlap_cuts[p + 1], loop->outer_end()) -
                                         std::max(st.overlap_cuts[p], loop->outer_begin())));
    }
  } else if (st.balancer) {
    st.splits.clear();
    // Cuts shared by several loops: participant p has outermost indices [cuts[p], cuts[p + 1]).
    // One split for the chain, or per loop, where loops too short ever to be timed (halo loops)
    // follow the cuts of the chain's largest loop rather than equal parts, so rows stay put.
    std::vector<int> cuts;
    if (!st.options.split_each_loop) {
      int first = loops[0]->outer_begin(), last = loops[0]->outer_end();
      for (const auto& loop : loops) {
        first = std::min(first, loop->outer_begin());
        last = std::max(last, loop->outer_end());
      }
      cuts.push_back(first);
      for (int rows : st.balancer->split(detail::chain_key, last - first)) cuts.push_back(cuts.back() + rows);
    } else {
      const auto largest = std::max_element(loops.begin(), loops.end(), [](const auto& a, const auto& b) {
        return a->outer_end() - a->outer_begin() < b->outer_end() - b->outer_begin();
      });
      const detail::LoopRecord& big = **largest;
      if (st.balancer->has_rates(big.name)) {
        cuts.push_back(big.outer_begin());
        for (int rows : st.balancer->split(big.name, big.outer_end() - big.outer_begin()))
          cuts.push_back(cuts.back() + rows);
      }
    }
    for (const auto& loop : loops) {
      if (st.options.split_each_loop && (cuts.empty() || st.balancer->has_rates(loop->name))) {
        st.splits.push_back(st.balancer->split(loop->name, loop->outer_end() - loop->outer_begin()));
      } else {
        std::vector<int>& parts = st.splits.emplace_back();
        for (std::size_t p = 0; p + 1 < cuts.size(); ++p)
          parts.push_back(
              std::max(0, std::min(cuts[p + 1], loop->outer_end()) - std::max(cuts[p], loop->outer_begin())));
      }
      st.last_split[loop->name] = st.splits.back();
      for (int rows : st.splits.back()) {
        const auto* b = reinterpret_cast<const std::byte*>(&rows);
        shape.insert(shape.end(), b, b + sizeof rows);
      }
    }
  }
  auto found = std::find_if(st.built.begin(), st.built.end(), [&](const auto& b) { return b->shape == shape; });
  if (found != st.built.end()) {
    std::rotate(st.built.begin(), found, found + 1);
  } else {
    build(loops);
    st.built.front()->shape = std::move(shape);
  }
  detail::ChainState::BuiltChain& chain = *st.built.front();
  try {
    chain.graph->run(st.executor).get();
  } catch (...) {
    st.built.erase(st.built.begin());  // built again next time rather than trusted after a failure
    st.current.clear();
    throw;
  }
  st.current.clear();
  if (overlapped && st.options.balance)
    detail::record_overlapped_times(st, chain.times);
  else if (st.balancer && st.options.balance)
    detail::record_times(st, chain.times, loops);
  for (const auto& loop : loops) {
    loop->finish();
    st.bytes_required += loop->bytes_required;
  }
  st.executed += loops.size();
}

void Context::build(const std::vector<std::unique_ptr<detail::LoopRecord>>& loops) {
  detail::ChainState& st = *state_;
  auto built = std::make_unique<detail::ChainState::BuiltChain>();
  built->graph = std::make_unique<AccessGraph>(st.memory, "loop chain");
  AccessGraph& g = *built->graph;
  detail::ChainState* chain = &st;
  std::vector<detail::ChainState::SlabTime>* times = &built->times;
  // A slab of loop `index` on the CPU workers (device == host_participant) or an accelerator;
  // `participant` (with a balancer) is who measures it.
  // `lane` picks the device's stream: a part's rows that wait for another device go on a stream
  // of their own, so that their wait on the device does not hold the independent rows back.
  auto add = [&](std::size_t index, int lo, int hi, std::size_t device, std::size_t participant, std::size_t lane = 0) {
    const detail::LoopRecord& loop = *loops[index];
    detail::SlabAccesses a = detail::slab_accesses(loop, lo, hi);
    const bool timed = st.balancer != nullptr;
    const std::size_t slab = times->size();
    if (timed) times->push_back(detail::ChainState::SlabTime{index, participant, hi - lo, 0.0, nullptr});
    if (device == detail::ChainState::host_participant) {
      g.host(loop.name, std::move(a.declared),
             [chain, times, index, lo, hi, slot = a.slot, timed, slab](const NodeData& d) {
               const std::vector<void*> bases = detail::bases_of(d, slot);
               if (!timed) return chain->current[index]->run(lo, hi, bases.data());
               const auto begin = std::chrono::steady_clock::now();
               chain->current[index]->run(lo, hi, bases.data());
               (*times)[slab].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
             });
    } else {
      // A GPU runs the slab as a kernel of the loop's own (launch_cuda); a simulated device runs
      // the CPU body on its stream, its time taken by the device's clock.
      const bool gpu_timed = timed && st.options.balance;
      g.device(
          st.devices.accelerator(device), loop.name, std::move(a.declared),
          [chain, times, index, lo, hi, slot = a.slot, timed, gpu_timed, slab](const NodeData& d) {
            detail::LoopRecord* l = chain->current[index];
            const std::vector<void*> bases = detail::bases_of(d, slot);
            Stream& stream = d.stream();
            auto label = [l] { return l->name; };
            auto cpu = [l, lo, hi, bases] { l->run(lo, hi, bases.data()); };
            auto gpu = [&](void*) {
              l->launch_cuda(stream, lo, hi, bases.data(), gpu_timed ? &(*times)[slab].gpu_seconds : nullptr);
            };
            if (!timed) return tessera::detail::launch_on_stream(stream, label, std::move(cpu), gpu);
            tessera::detail::launch_on_stream_timed(
                stream, label, std::move(cpu),
                [times, slab](std::chrono::nanoseconds t) {
                  (*times)[slab].seconds = std::chrono::duration<double>(t).count();
                },
                gpu);
          },
          lane);
    }
  };
  const std::size_t host = detail::ChainState::host_participant;
  const std::size_t workers = std::max<std::size_t>(1, st.executor.num_workers());
  // The CPU workers' part of [lo, hi): a slab each.
  auto add_host_rows = [&](std::size_t index, int lo, int hi, std::size_t participant) {
    const int n = hi - lo, parts = int(std::min<std::size_t>(workers, std::size_t(n)));
    for (int p = 0; p < parts; ++p)
      add(index, lo + int(std::int64_t(n) * p / parts), lo + int(std::int64_t(n) * (p + 1) / parts), host, participant);
  };
  st.last_tiles = 0;
  st.last_tile_rows = 0;
  if (!st.overlap_tiles.empty()) {
    st.last_tiles = detail::add_overlapped_tiles(st, g, loops, times);
    st.built.insert(st.built.begin(), std::move(built));
    if (st.built.size() > detail::ChainState::graphs_kept) st.built.pop_back();
    ++st.graphs_built;
    return;
  }
  // Tiles are skewed by stencil reach in one index space; datasets of another spacing would need
  // their own, so such chains run untiled.
  const bool one_spacing = detail::one_spacing(loops);
  // OPS's Algorithm 1 for the parts of loop l: the rows of a part that read across a cut wait
  // for the neighbour's rows; the rest does not, so it is its own node, added first, and runs
  // meanwhile. `host_from`: where the host's rows start when tiles ran some of them already.
  auto add_parts = [&](std::size_t l, int host_from) {
    int at = loops[l]->outer_begin();
    const int reach = detail::read_reach(*loops[l]);
    for (std::size_t p = 0; p < st.participant_device.size(); ++p) {
      const int lo = st.participant_device[p] == host ? std::max(at, host_from) : at, hi = at + st.splits[l][p];
      at = hi;
      auto part = [&](int a, int z, std::size_t lane) {
        if (a >= z) return;
        if (st.participant_device[p] == host)
          add_host_rows(l, a, z, p);
        else
          add(l, a, z, st.participant_device[p], p, lane);
      };
      const int inner_lo = lo > loops[l]->outer_begin() ? lo + reach : lo;
      const int inner_hi = hi < loops[l]->outer_end() ? hi - reach : hi;
      if (reach > 0 && inner_lo < inner_hi && (inner_lo != lo || inner_hi != hi)) {
        part(inner_lo, inner_hi, 0);
        part(lo, inner_lo, 1);
        part(inner_hi, hi, 1);
      } else {
        part(lo, hi, 0);
      }
    }
  };
  const bool host_has_part = !st.balancer || st.participant_device.front() == host;
  if (st.options.tiled && one_spacing && host_has_part) {
    // Tile-major order: the AccessGraph orders the (tile, loop) nodes by their declared rows, so
    // tiles overlap as a wavefront where the skew leaves them independent. Hybrid, the host tiles
    // its own part: tiles stop short of every cut by the chain's reach, so none touches a
    // device's rows, and what is left of each loop runs loop by loop beside the devices' parts
    // (as a last tile would: the skew keeps it apart from the tiles before).
    const std::vector<int> shift = detail::tile_shifts(loops);
    const int rows = st.options.tile_rows > 0 ? st.options.tile_rows
                                              : detail::auto_tile_rows(loops, st.options.tile_bytes,
                                                                       *std::max_element(shift.begin(), shift.end()));
    int first = loops[0]->outer_begin(), last = loops[0]->outer_end(), max_shift = 0, max_reach = 0;
    std::vector<int> host_end(loops.size());
    for (std::size_t l = 0; l < loops.size(); ++l) {
      first = std::min(first, loops[l]->outer_begin());
      last = std::max(last, loops[l]->outer_end());
      max_shift = std::max(max_shift, shift[l]);
      max_reach = std::max(max_reach, detail::read_reach(*loops[l]));
      host_end[l] = st.balancer ? loops[l]->outer_begin() + st.splits[l][0] : loops[l]->outer_end();
    }
    auto boundary = [&](std::size_t l, std::int64_t t) {
      const std::int64_t b = std::int64_t(first) + t * rows - shift[l];
      return int(std::clamp<std::int64_t>(b, loops[l]->outer_begin(), host_end[l]));
    };
    std::int64_t tiles = 0;
    if (!st.balancer) {
      while (std::int64_t(first) + tiles * rows - max_shift < last) ++tiles;
    } else {
      std::int64_t edge = std::numeric_limits<std::int64_t>::max();
      for (std::size_t l = 0; l < loops.size(); ++l)
        if (st.splits[l][0] > 0 && host_end[l] < loops[l]->outer_end())
          edge = std::min<std::int64_t>(edge, host_end[l] - max_reach);
      if (edge == std::numeric_limits<std::int64_t>::max()) edge = last + max_shift;
      tiles = std::max<std::int64_t>(0, (edge - first) / rows);
    }
    for (std::int64_t t = 0; t < tiles; ++t)
      for (std::size_t l = 0; l < loops.size(); ++l) {
        const int lo = boundary(l, t), hi = boundary(l, t + 1);
        if (lo < hi) add(l, lo, hi, host, 0);
      }
    if (st.balancer)
      for (std::size_t l = 0; l < loops.size(); ++l) add_parts(l, boundary(l, tiles));
    st.last_tiles = std::size_t(tiles);
    st.last_tile_rows = rows;
  } else {
    for (std::size_t l = 0; l < loops.size(); ++l) {
      if (!st.balancer)
        add_host_rows(l, loops[l]->outer_begin(), loops[l]->outer_end(), 0);
      else
        add_parts(l, loops[l]->outer_begin());
    }
  }
  st.built.insert(st.built.begin(), std::move(built));
  if (st.built.size() > detail::ChainState::graphs_kept) st.built.pop_back();
  ++st.graphs_built;
}

}  // namespace tessera::loops
