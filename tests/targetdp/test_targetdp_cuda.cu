// targetDP compiled by nvcc, on a CUDA target: TARGET_ENTRY kernels are __global__, TARGET_TLP
// maps CUDA threads to chunks of VVL sites, TARGET_LAUNCH is a launch on the target's stream,
// TARGET_CONST variables live in constant memory and masked copies pack on the GPU. The GPU
// tests skip, giving the reason, where the build has no CUDA backend or no GPU is present.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../cuda/cuda_test_support.hpp"
#include "targetdp_cases.hpp"

namespace {

using namespace targetdp_cases;

// Counts the visits of every site, so that a site visited twice or never shows.
TARGET_ENTRY void count_visits(int* visits, size_t n) {
  size_t base;
  TARGET_TLP(base, n) {
    int v;
    for (v = 0; v < tdp_nv_; v++) atomicAdd(&visits[base + v], 1);
  }
}

/// Why the CUDA tests cannot run here ("" when they can).
std::string why_no_cuda_target() {
  if (!tessera::DeviceSet::has_cuda_backend())
    return "this build of tessera has no CUDA device backend (configure with -DTESSERA_WITH_CUDA=ON)";
  std::string why;
  if (!tessera_test::have_gpu(why)) return why;
  return {};
}

class TargetDPCuda : public ::testing::Test {
protected:
  void SetUp() override {
    const std::string why = why_no_cuda_target();
    if (!why.empty()) GTEST_SKIP() << why;
    targetInit("cuda");
    initialised_ = true;
    ASSERT_EQ(std::string(tdp_target_name()).rfind("cuda", 0), 0u) << tdp_target_name();
  }
  void TearDown() override {
    if (initialised_) targetFinalize();
  }

private:
  bool initialised_ = false;
};

TEST_F(TargetDPCuda, ScalesAThreeVectorFieldAsThePaperShows) {
  // Past one block (TPB chunks) and a partial last chunk, as well as the paper's small sizes.
  for (size_t n : {size_t{1}, size_t{7}, size_t{64}, size_t{1001}, size_t{TPB * VVL + 3}, size_t{1} << 20}) {
    check_scale(n);
    if (HasFatalFailure()) return;
  }
}

TEST_F(TargetDPCuda, EverySiteIsVisitedOnceForAnyExtent) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{4097}, size_t{100003}}) {
    int* t_visits = nullptr;
    targetCalloc((void**)&t_visits, (n + 1) * sizeof(int));
    count_visits TARGET_LAUNCH(n)(t_visits, n);
    syncTarget();
    std::vector<int> visits(n + 1, -1);
    copyFromTarget(visits.data(), t_visits, visits.size() * sizeof(int));
    targetFree(t_visits);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i], 1) << "site " << i << " of " << n;
    EXPECT_EQ(visits[n], 0) << "a site past the extent was visited";
  }
}

TEST_F(TargetDPCuda, ConstantsReachKernelsInLaunchOrder) { check_constants_in_launch_order(); }

TEST_F(TargetDPCuda, MaskedCopiesMoveOnlyTheSelectedSitesOfEveryField) { check_masked_copies(); }

// Needs no GPU: a kernel compiled by nvcc refuses a sim target, naming the launch and the way out,
// before anything reaches the CUDA runtime.
TEST(TargetDPCudaOnOtherTargets, AnNvccKernelOnASimTargetIsReportedNamingTheLaunch) {
  targetInit("sim:1");
  double* t = nullptr;
  targetMalloc((void**)&t, 8 * sizeof(double));
  try {
    scale TARGET_LAUNCH(8)(t, size_t{8});
    FAIL() << "the launch on a sim target was not refused";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("compiled by nvcc"), std::string::npos) << what;
    EXPECT_NE(what.find("test_targetdp_cuda.cu"), std::string::npos) << what;
    EXPECT_NE(what.find("sim:0"), std::string::npos) << what;
  }
  targetFree(t);
  targetFinalize();
}

}  // namespace
