// A process that links tessera starts no thread of its own, and a flow's matrix products start no
// BLAS pool beside the executor's workers: on a machine shared by MPI ranks, or by a program and
// its tests, a spinning pool takes cores from the work (docs/flow.md, "Firings are executor work").

#include "flow_test_support.hpp"

#include <tessera/sched/executor.hpp>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace flow = tessera::flow;

namespace {

// ThreadSanitizer runs a thread of its own (GCC says so; `make tsan` does not run this test).
#if defined(__SANITIZE_THREAD__)
constexpr bool own_threads = true;
#else
constexpr bool own_threads = false;
#endif

/// The threads of this process (Linux), or -1 where /proc cannot say.
int threads_now() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int n = 0;
  while (const dirent* e = readdir(tasks))
    if (e->d_name[0] != '.') ++n;
  closedir(tasks);
  return n;
}

}  // namespace

// OpenBLAS's pthread build starts a pool of (cores - 1) threads at load, which yield-spin for
// about 0.1 s: tessera shuts it as it is loaded (src/flow/blas.cpp), unless the user set
// OPENBLAS_NUM_THREADS (flow.quiet_start_keeps_a_chosen_blas_pool runs this file so).
TEST(QuietStart, OneThreadBeforeAnyExecutor) {
  if (own_threads) GTEST_SKIP() << "ThreadSanitizer runs a thread of its own";
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) GTEST_SKIP() << "OPENBLAS_NUM_THREADS is set";
  const int n = threads_now();
  if (n < 0) GTEST_SKIP() << "no /proc/self/task here";
  EXPECT_EQ(n, 1) << "threads running before any tessera object was made";
  // Keeps libtessera loaded (and so its initialisers run) however the linker trims.
  EXPECT_EQ(tessera::DeviceSet::select("host").num_accelerators(), 0u);
}

// The pthread build of OpenBLAS has this; the serial and OpenMP builds start no pool of their own.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

TEST(QuietStart, AChosenBlasThreadCountIsLeftAlone) {
  const char* chosen = std::getenv("OPENBLAS_NUM_THREADS");
  if (chosen == nullptr) GTEST_SKIP() << "run with OPENBLAS_NUM_THREADS set";
  if (own_threads) GTEST_SKIP() << "ThreadSanitizer runs a thread of its own";
  if (threads_now() < 0) GTEST_SKIP() << "no /proc/self/task here";
#if defined(TESSERA_TEST_HAVE_OPENBLAS)
  if (blas_thread_shutdown_ == nullptr) GTEST_SKIP() << "this OpenBLAS starts no pool of its own";
  // OpenBLAS runs (chosen - 1) threads beside the caller, capped by the cores.
  const long want = std::min<long>(std::atol(chosen), static_cast<long>(std::thread::hardware_concurrency()));
  EXPECT_EQ(threads_now(), static_cast<int>(std::max(1L, want))) << "OPENBLAS_NUM_THREADS=" << chosen;
#else
  GTEST_SKIP() << "built without OpenBLAS";
#endif
}

TEST(QuietStart, MatrixProductsLeaveNoPoolBehind) {
  if (own_threads) GTEST_SKIP() << "ThreadSanitizer runs a thread of its own";
  if (threads_now() < 0) GTEST_SKIP() << "no /proc/self/task here";
  const std::size_t m = 96, k = 64, n = 80;
  const auto a = flow_test::sample<double>(m * k, 3), b = flow_test::sample<double>(k * n, 4);
  std::vector<double> product;
  {
    // Its own executor, so that every thread the flow starts has ended when the block does.
    tessera::Executor executor;
    auto devices = tessera::DeviceSet::select("host");
    flow::FlowOptions options;
    options.executor = &executor;
    flow::Flow f{devices, options};
    auto& mp = f.add<flow::MatrixProduct<double>>();
    f.on_receive(mp.output, [&](const flow::Matrix<double>& r) { product = r.to_vector(); });
    auto set = f.new_input_set();
    f.send(mp.left, flow::Matrix<double>(f, {m, k}, a), set);
    f.send(mp.right, flow::Matrix<double>(f, {k, n}, b), set);
    f.wait();
  }
  flow_test::expect_product(a, b, m, k, n, product);
  if (HasFatalFailure()) return;
  // The flow and its executor are gone, and with them every thread they started; OpenBLAS,
  // told to use one thread, must not have started its pool again.
  EXPECT_EQ(threads_now(), 1) << "threads left running after the flow ended";
}
