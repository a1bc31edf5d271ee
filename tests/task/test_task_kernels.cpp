// Portable kernels: one body over a grid of groups, with group and local ids, shared scratch
// and the barrier at the end of each `items` region, on the host's workers and on sim devices.
#include "task_test_support.hpp"

#include <numeric>
#include <vector>

using namespace tessera;

namespace {

// DOC tasks-kernel begin
// Each group sums its items' values through shared memory, halving the active items per
// region; the end of each region is the barrier that makes the partial sums visible.
struct BlockSum {
  TESSERA_HOST_DEVICE void operator()(const Group& g, const double* x, double* sums) const {
    double* s = g.shared<double>();
    g.items([&](const Item& it) { s[it.local.x] = x[it.global.x]; });
    for (std::size_t half = g.size().x / 2; half > 0; half /= 2)
      g.items([&](const Item& it) {
        if (it.local.x < half) s[it.local.x] += s[it.local.x + half];
      });
    g.items([&](const Item& it) {
      if (it.local.x == 0) sums[g.id().x] = s[0];
    });
  }
};

TEST(TaskKernels, BlockSumWithSharedMemory) {
  auto devices = DeviceSet::select("sim:2");
  TaskRuntime rt(devices);
  constexpr std::size_t groups = 64, items = 128, n = groups * items;
  HeteroObject<double> x(rt, n, "x"), sums(rt, groups, "sums");
  double* h = x.request(Access::write).get();
  std::iota(h, h + n, 0.0);
  x.release();
  for (TaskKind kind : {TaskKind::cpu, TaskKind::gpu}) {
    Task t = kernel_task("block-sum", kind, Grid{{groups}, {items}}, BlockSum{}, tessera::read(x), tessera::write(sums));
    t.shared_bytes(items * sizeof(double));
    rt.submit(t).get();
    std::vector<double> out(groups);
    sums.copy_to(out.data()).get();
    for (std::size_t b = 0; b < groups; ++b)  // sum of b*items .. b*items + items - 1
      ASSERT_EQ(out[b], static_cast<double>(items * (b * items) + items * (items - 1) / 2)) << to_string(kind) << " group " << b;
  }
}
// DOC tasks-kernel end

struct Stamp3 {
  TESSERA_HOST_DEVICE void operator()(const Group& g, int* hits, std::size_t nx, std::size_t ny) const {
    g.items([&](const Item& it) {
      const std::size_t i = it.global.x + nx * (it.global.y + ny * it.global.z);
      hits[i] += 1 + static_cast<int>(it.local_linear == 0);  // group leaders count twice
    });
  }
};

class GridIds : public ::testing::TestWithParam<const char*> {};

TEST_P(GridIds, ThreeDimensionalGridVisitsEachItemOnce) {
  auto devices = task_test::devices_for(GetParam());
  TaskRuntime rt(devices);
  const Grid grid{{3, 2, 2}, {4, 2, 3}};
  const std::size_t nx = 12, ny = 4, nz = 6, n = nx * ny * nz;
  HeteroObject<int> hits(rt, n, "hits");
  rt.submit(native_task("zero", TaskKind::cpu, [n](const TaskContext&, int* p) { std::fill_n(p, n, 0); }, tessera::write(hits)));
  const TaskKind kind = devices.num_accelerators() > 0 ? TaskKind::gpu : TaskKind::cpu;
  rt.submit(kernel_task("stamp", kind, grid, Stamp3{}, tessera::read_write(hits), nx, ny)).get();
  std::vector<int> out(n);
  hits.copy_to(out.data()).get();
  int leaders = 0;
  for (int v : out) {
    ASSERT_TRUE(v == 1 || v == 2);
    leaders += v == 2;
  }
  EXPECT_EQ(leaders, static_cast<int>(grid.groups.volume()));
}

INSTANTIATE_TEST_SUITE_P(Backends, GridIds, ::testing::ValuesIn(task_test::backends));

TEST(TaskKernels, CopyToWritesStraightFromTheDevice) {
  auto devices = DeviceSet::select("sim:1");
  TaskRuntime rt(devices);
  HeteroObject<float> x(rt, 1000, "x");
  rt.submit(native_task("fill", TaskKind::gpu, [](const TaskContext& ctx, float* p) {
    EXPECT_EQ(ctx.device().name(), "sim:0");
    for (int i = 0; i < 1000; ++i) p[i] = static_cast<float>(i);
  }, tessera::write(x)));
  std::vector<float> out(1000);
  auto h = x.copy_to(out.data());
  h.get();
  EXPECT_EQ(h.device().name(), "sim:0");                 // the copy ran from the device ...
  EXPECT_FALSE(x.buffer().has_replica(0));               // ... with no host copy made
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], static_cast<float>(i));
}

}  // namespace
