// targetDP on the host executor and on sim devices: the paper's scale example, TLP coverage for
// any extent, constants in launch order, masked copies, and the selection of the target.

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

TARGET_CONST double t_a;
TARGET_CONST int t_shift;
TARGET_CONST double t_weights[4];
TARGET_CONST double t_matrix[2][3];

// The scale example of the targetDP paper (§III-C), on a 3-vector SoA field.
TARGET_ENTRY void scale(double* t_field, size_t n) {
  size_t baseIndex;
  TARGET_TLP(baseIndex, n) {
    int iDim, vecIndex;
    for (iDim = 0; iDim < 3; iDim++) {
      TARGET_ILP(vecIndex) t_field[iDim * n + baseIndex + vecIndex] = t_a * t_field[iDim * n + baseIndex + vecIndex];
    }
  }
}

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

// Reads every kind of constant: out[i] = shift + sum(weights) + matrix[1][2] + i.
TARGET_ENTRY void use_constants(double* out, size_t n) {
  size_t base;
  TARGET_TLP(base, n) {
    int v;
    TARGET_ILP(v) {
      out[base + v] = t_shift + t_weights[0] + t_weights[1] + t_weights[2] + t_weights[3] + t_matrix[1][2] +
                      static_cast<double>(base + v);
    }
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
    std::vector<double> field(3 * n);
    std::iota(field.begin(), field.end(), 1.0);
    const double a = 2.5;
    double* t_field = nullptr;
    const size_t bytes = field.size() * sizeof(double);
    targetMalloc((void**)&t_field, bytes);
    copyToTarget(t_field, field.data(), bytes);
    copyConstantDoubleToTarget(&t_a, &a, sizeof(double));
    scale TARGET_LAUNCH(n)(t_field, n);
    syncTarget();
    std::vector<double> back(3 * n);
    copyFromTarget(back.data(), t_field, bytes);
    targetFree(t_field);
    for (size_t i = 0; i < field.size(); ++i) ASSERT_EQ(back[i], 2.5 * (i + 1.0)) << "n " << n << " at " << i;
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

TEST_P(TargetDP, ConstantsReachKernelsInLaunchOrder) {
  const size_t n = 100;
  double* t_out1 = nullptr;
  double* t_out2 = nullptr;
  targetMalloc((void**)&t_out1, n * sizeof(double));
  targetMalloc((void**)&t_out2, n * sizeof(double));
  const double weights[4] = {0.5, 0.25, 0.125, 0.0625};
  const double matrix[2][3] = {{1, 2, 3}, {4, 5, 6}};
  int shift = 10;
  copyConstantIntToTarget(&t_shift, &shift, sizeof(int));
  copyConstantDouble1DArrayToTarget(t_weights, weights, sizeof weights);
  copyConstantDouble2DArrayToTarget(&t_matrix[0][0], &matrix[0][0], sizeof matrix);
  use_constants TARGET_LAUNCH(n)(t_out1, n);
  // A new value for the next launch only, with no sync in between: the first still sees 10.
  shift = 1000;
  copyConstantIntToTarget(&t_shift, &shift, sizeof(int));
  use_constants TARGET_LAUNCH(n)(t_out2, n);
  syncTarget();
  std::vector<double> out1(n), out2(n);
  copyFromTarget(out1.data(), t_out1, n * sizeof(double));
  copyFromTarget(out2.data(), t_out2, n * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out1[i], 10 + 0.9375 + 6 + i);
    ASSERT_EQ(out2[i], 1000 + 0.9375 + 6 + i);
  }
  targetFree(t_out1);
  targetFree(t_out2);
}

TEST_P(TargetDP, MaskedCopiesMoveOnlyTheSelectedSitesOfEveryField) {
  const size_t nsites = 37, nfields = 3;
  std::vector<char> mask(nsites, 0);
  for (size_t s = 0; s < nsites; s += 3) mask[s] = 1;
  mask[nsites - 1] = 1;
  std::vector<double> host(nsites * nfields);
  std::iota(host.begin(), host.end(), 0.0);
  double* t_data = nullptr;
  targetCalloc((void**)&t_data, host.size() * sizeof(double));
  copyToTargetMasked(t_data, host.data(), nsites, nfields, mask.data(), mask.size());
  std::vector<double> all(host.size(), -1.0);
  copyFromTarget(all.data(), t_data, all.size() * sizeof(double));
  for (size_t f = 0; f < nfields; ++f)
    for (size_t s = 0; s < nsites; ++s)
      ASSERT_EQ(all[f * nsites + s], mask[s] ? host[f * nsites + s] : 0.0) << "field " << f << " site " << s;

  // Back: the target now holds 100 + i everywhere; only masked sites of `back` change.
  std::vector<double> target_values(host.size());
  std::iota(target_values.begin(), target_values.end(), 100.0);
  copyToTarget(t_data, target_values.data(), target_values.size() * sizeof(double));
  std::vector<double> back(host.size(), -7.0);
  copyFromTargetMasked(back.data(), t_data, nsites, nfields, mask.data(), mask.size());
  for (size_t f = 0; f < nfields; ++f)
    for (size_t s = 0; s < nsites; ++s)
      ASSERT_EQ(back[f * nsites + s], mask[s] ? target_values[f * nsites + s] : -7.0) << "field " << f << " site " << s;
  targetFree(t_data);
}

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
