// The kernel engine's launch (exec/detail/kernel_launch.hpp, cpu_groups.hpp): the backend is
// chosen from the stream at run time, a file compiled without nvcc refuses CUDA work with one
// error, grids a GPU cannot run are refused before launch, and the CPU backend runs every group
// of a grid once with its own scratch.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/exec/detail/cpu_groups.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>
#include <tessera/sched/executor.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace tessera;

TEST(KernelLaunch, AStreamWithoutANativeQueueRunsTheCpuBodyInStreamOrder) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  Stream& s = devices.accelerator(0).compute_stream(0);
  std::vector<int> order;  // touched by the stream's thread only, until synchronize
  std::thread::id ran_on;
  bool cuda_called = false;
  s.enqueue_host([&] { order.push_back(1); }, "before");
  detail::launch_on_stream(
      s, [] { return std::string("kernel"); },
      [&] {
        ran_on = std::this_thread::get_id();
        order.push_back(2);
      },
      [&](void*) { cuda_called = true; });
  s.enqueue_host([&] { order.push_back(3); }, "after");
  s.synchronize();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_NE(ran_on, std::this_thread::get_id()) << "the sim device's kernel ran on the caller, not its stream";
  EXPECT_FALSE(cuda_called);
}

TEST(KernelLaunch, AFileCompiledWithoutNvccRefusesCudaWorkNamingItAndTheDevice) {
  auto devices = DeviceSet::select("sim:1:16MiB");
  bool launched = false;
  try {
    detail::cuda_body<detail::build_variant>(nullptr, devices.accelerator(0), [] { return std::string("task 'scale'"); },
                                             [&](auto) { launched = true; });
    FAIL() << "a host-compiled kernel reached a CUDA launch";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("task 'scale'"), std::string::npos) << what;
    EXPECT_NE(what.find(devices.accelerator(0).name()), std::string::npos) << what;
    EXPECT_NE(what.find("nvcc"), std::string::npos) << what;
  }
  EXPECT_FALSE(launched);
}

TEST(KernelLaunch, GridsAGpuCannotRunAreRefusedBeforeLaunch) {
  const auto refused = [](const Grid& g, std::size_t shared, const char* word) {
    try {
      detail::check_cuda_launch("task 'k'", g, shared);
      ADD_FAILURE() << "accepted " << g.groups.to_string() << " x " << g.items.to_string() << " with " << shared;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("task 'k'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused(Grid{{4}, {1025}}, 0, "items per group");
  refused(Grid{{4}, {32, 32, 2}}, 0, "items per group");
  refused(Grid{{4}, {256}}, 48 * 1024 + 1, "shared scratch");
  refused(Grid{{1, 65536}, {32}}, 0, "groups exceed");
  refused(Grid{{std::size_t{1} << 31}, {32}}, 0, "groups exceed");
  EXPECT_NO_THROW(detail::check_cuda_launch("task 'k'", Grid{{(std::size_t{1} << 31) - 1, 65535, 65535}, {32, 32}}, 48 * 1024));
}

namespace {

struct GroupVisit {
  std::size_t shared_bytes;
  std::vector<std::atomic<int>>* visits;
  Dim3 count;
  std::atomic<int>* scratch_faults;
};

void visit_group(void* context, Dim3 id, void* scratch) {
  auto& v = *static_cast<GroupVisit*>(context);
  // The scratch is this thread's for the whole group: fill it, then find the fill intact.
  auto* bytes = static_cast<unsigned char*>(scratch);
  const auto mark = static_cast<unsigned char>(id.x * 7 + id.y * 13 + id.z * 31);
  std::memset(bytes, mark, v.shared_bytes);
  for (std::size_t i = 0; i < v.shared_bytes; ++i)
    if (bytes[i] != mark) {
      v.scratch_faults->fetch_add(1);
      break;
    }
  (*v.visits)[id.x + v.count.x * (id.y + v.count.y * id.z)].fetch_add(1);
}

}  // namespace

TEST(KernelLaunch, TheCpuBackendRunsEveryGroupOnceWithItsOwnScratch) {
  Executor ex;
  for (Executor* executor : {&ex, static_cast<Executor*>(nullptr)}) {
    const Grid grid{{7, 5, 3}, {4}};
    std::vector<std::atomic<int>> visits(grid.groups.volume());
    std::atomic<int> faults{0};
    GroupVisit v{1000, &visits, grid.groups, &faults};
    detail::run_groups(executor, grid, v.shared_bytes, &visit_group, &v);
    for (std::size_t i = 0; i < visits.size(); ++i) EXPECT_EQ(visits[i].load(), 1) << "group " << i;
    EXPECT_EQ(faults.load(), 0) << "two groups shared one scratch at once";
  }
}
