// The lazy chain: loops recorded by par_loop run together when a value is needed. Each loop is
// cut into slabs along its outermost dimension (one per CPU worker on the host, one per
// accelerator otherwise); each slab declares the rows its stencils reach, so the AccessGraph
// orders slab after slab only where rows overlap, and the memory layer moves between devices
// only the rows a slab reads that another device wrote (OPS's dirty halo bookkeeping).
#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/exec/access_graph.hpp>
#include <tessera/loops/block.hpp>
#include <tessera/loops/detail/loop_record.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/sched/executor.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace tessera::loops {
namespace detail {

class ChainState {
 public:
  ChainState(DeviceSet& d, Executor& e) : devices(d), executor(e), memory(d) {}
  DeviceSet& devices;
  Executor& executor;
  MemoryManager memory;
  std::vector<std::unique_ptr<LoopRecord>> loops;
  std::size_t executed = 0;
};

namespace {

// One slab's declarations: a dataset used twice in a loop is declared once, over both reaches.
struct SlabAccesses {
  std::vector<BufferAccess> declared;
  std::vector<std::size_t> slot;  // per dats entry: its declaration
};

SlabAccesses slab_accesses(const LoopRecord& loop, int begin, int end) {
  SlabAccesses out;
  for (const DatUse& u : loop.dats) {
    const RowRange rows{std::size_t(begin + u.low - u.first_row), std::size_t(end - 1 + u.high - u.first_row + 1)};
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

std::vector<void*> bases_of(const NodeData& d, const std::vector<std::size_t>& slot) {
  std::vector<void*> bases;
  bases.reserve(slot.size());
  for (std::size_t k : slot) bases.push_back(d.base(k));
  return bases;
}

}  // namespace
}  // namespace detail

Context::Context(DeviceSet& devices, Executor& executor)
    : state_(std::make_unique<detail::ChainState>(devices, executor)) {
  for (std::size_t a = 0; a < devices.num_accelerators(); ++a)
    if (devices.accelerator(a).kind() == DeviceKind::cuda)
      throw Error("loops::Context: device '" + devices.accelerator(a).name() +
                  "' is a CUDA GPU, and loops run on the host and sim devices so far; select \"host\" or \"sim:N\"");
}
Context::~Context() = default;

MemoryManager& Context::memory() noexcept { return state_->memory; }
DeviceSet& Context::devices() noexcept { return state_->devices; }
Executor& Context::executor() noexcept { return state_->executor; }
std::size_t Context::pending() const noexcept { return state_->loops.size(); }
std::size_t Context::executed() const noexcept { return state_->executed; }

void Context::record(std::unique_ptr<detail::LoopRecord> loop) { state_->loops.push_back(std::move(loop)); }

void Context::execute() {
  detail::ChainState& st = *state_;
  if (st.loops.empty()) return;
  // Taken out first: a failed chain is dropped, not run again by the next value asked for.
  std::vector<std::unique_ptr<detail::LoopRecord>> loops = std::move(st.loops);
  st.loops.clear();
  const std::size_t accelerators = st.devices.num_accelerators();
  AccessGraph g(st.memory, "loop chain");
  for (const auto& owned : loops) {
    detail::LoopRecord* loop = owned.get();
    const int b = loop->outer_begin(), n = loop->outer_end() - b;
    const std::size_t wanted = accelerators > 0 ? accelerators : std::max<std::size_t>(1, st.executor.num_workers());
    const int parts = int(std::min<std::size_t>(wanted, std::size_t(n)));
    for (int p = 0; p < parts; ++p) {
      const int lo = b + int(std::int64_t(n) * p / parts), hi = b + int(std::int64_t(n) * (p + 1) / parts);
      detail::SlabAccesses a = detail::slab_accesses(*loop, lo, hi);
      if (accelerators == 0) {
        g.host(loop->name, std::move(a.declared), [loop, lo, hi, slot = a.slot](const NodeData& d) {
          const std::vector<void*> bases = detail::bases_of(d, slot);
          loop->run(lo, hi, bases.data());
        });
      } else {
        g.device(st.devices.accelerator(std::size_t(p)), loop->name, std::move(a.declared),
                 [loop, lo, hi, slot = a.slot](const NodeData& d) {
                   d.stream().enqueue_host([loop, lo, hi, bases = detail::bases_of(d, slot)] {
                     loop->run(lo, hi, bases.data());
                   }, loop->name);
                 });
      }
    }
  }
  g.run(st.executor).get();
  for (const auto& loop : loops) loop->finish();
  st.executed += loops.size();
}

}  // namespace tessera::loops
