// targetDP on the host executor and on sim devices: the paper's scale example, TLP coverage for
// any extent, constants in launch order, masked copies, and the selection of the target.

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "targetdp_cases.hpp"

namespace {

using namespace targetdp_cases;

// Counts the visits of every site, so that a site visited twice or never shows.
TARGET_ENTRY void count_visits(std::atomic<int>* visits, size_t n) {
  size_t base;
  TARGET_TLP(base, n) {
    int v;
    for (v = 0; v < tdp_nv_; v++) visits[base + v].fetch_add(1, std::memory_order_relaxed);
  }
}

// Two TLP loops of different extents in one kernel: each is shared out over the workers.
TARGET_ENTRY void count_two_extents(std::atomic<int>* a, size_t na, std::atomic<int>* b, size_t nb) {
  size_t base;
  TARGET_TLP(base, na) {
    int v;
    for (v = 0; v < tdp_nv_; v++) a[base + v].fetch_add(1, std::memory_order_relaxed);
  }
  TARGET_TLP(base, nb) {
    int v;
    for (v = 0; v < tdp_nv_; v++) b[base + v].fetch_add(1, std::memory_order_relaxed);
  }
}

TARGET_ENTRY void throws_on_site_zero(double* out, size_t n) {
  size_t base;
  TARGET_TLP(base, n) {
    if (base == 0) throw std::runtime_error("site 0 is bad");
    int v;
    TARGET_ILP(v) out[base + v] = 1;
  }
}

class TargetDP : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override { targetInit(GetParam()); }
  void TearDown() override { targetFinalize(); }
};

TEST_P(TargetDP, ScalesAThreeVectorFieldAsThePaperShows) {
  for (size_t n : {size_t{1}, size_t{7}, size_t{64}, size_t{1001}}) {
    check_scale(n);
    if (HasFatalFailure()) return;
  }
}

TEST_P(TargetDP, EverySiteIsVisitedOnceForAnyExtent) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{4097}, size_t{100003}}) {
    std::vector<std::atomic<int>> visits(n + 1);
    count_visits TARGET_LAUNCH(n)(visits.data(), n);
    syncTarget();
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "site " << i << " of " << n;
    EXPECT_EQ(visits[n].load(), 0) << "a site past the extent was visited";
  }
}

TEST_P(TargetDP, TwoTlpLoopsOfDifferentExtentsInOneKernelEachCoverTheirRange) {
  const size_t na = 50000, nb = 333;
  std::vector<std::atomic<int>> a(na), b(nb);
  count_two_extents TARGET_LAUNCH(na)(a.data(), na, b.data(), nb);
  syncTarget();
  for (size_t i = 0; i < na; ++i) ASSERT_EQ(a[i].load(), 1) << "a " << i;
  for (size_t i = 0; i < nb; ++i) ASSERT_EQ(b[i].load(), 1) << "b " << i;
}

TEST_P(TargetDP, ConstantsReachKernelsInLaunchOrder) { check_constants_in_launch_order(); }

TEST_P(TargetDP, MaskedCopiesMoveOnlyTheSelectedSitesOfEveryField) { check_masked_copies(); }

TEST_P(TargetDP, CallocGivesZeros) {
  double* t = nullptr;
  targetCalloc((void**)&t, 1000 * sizeof(double));
  std::vector<double> back(1000, 1.0);
  copyFromTarget(back.data(), t, back.size() * sizeof(double));
  for (double x : back) ASSERT_EQ(x, 0.0);
  targetFree(t);
}

TEST_P(TargetDP, AKernelCalledAsAPlainFunctionCoversTheWholeRange) {
  const size_t n = 1000;
  std::vector<std::atomic<int>> visits(n);
  count_visits(visits.data(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1);
}

TEST_P(TargetDP, AKernelThatThrowsIsReportedNamingTheLaunch) {
  const size_t n = 64;
  double* t = nullptr;
  targetMalloc((void**)&t, n * sizeof(double));
  try {
    throws_on_site_zero TARGET_LAUNCH(n)(t, n);
    syncTarget();  // a sim target reports it here
    FAIL() << "the kernel's failure was lost";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("site 0 is bad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test_targetdp.cpp"), std::string::npos) << e.what();
  }
  syncTarget();  // reported once, not again
  targetFree(t);
}

INSTANTIATE_TEST_SUITE_P(Targets, TargetDP, ::testing::Values("host", "sim:1", "sim:4"),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (char& c : name)
                             if (c == ':') c = '_';
                           return name;
                         });

TEST(TargetDPSelection, TheTargetComesFromTessseraDevicesLikeEverythingElse) {
  ::setenv("TESSERA_DEVICES", "sim:2", 1);
  targetInit(nullptr);
  EXPECT_STREQ(tdp_target_name(), "sim:0");
  targetFinalize();
  ::setenv("TESSERA_DEVICES", "host", 1);
  targetInit("");
  EXPECT_STREQ(tdp_target_name(), "host");
  targetFinalize();
  ::unsetenv("TESSERA_DEVICES");
}

}  // namespace
