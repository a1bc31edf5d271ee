// targetDP compiled by nvcc, on a CUDA target: TARGET_ENTRY kernels are __global__, TARGET_TLP
// maps CUDA threads to chunks of VVL sites, TARGET_LAUNCH is a launch on the target's stream,
// TARGET_CONST variables live in constant memory and masked copies pack on the GPU. The GPU
// tests skip, giving the reason, where the build has no CUDA backend or no GPU is present.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "../cuda/cuda_test_support.hpp"

namespace {

TARGET_CONST double t_a;
TARGET_CONST int t_shift;
TARGET_CONST double t_weights[4];
TARGET_CONST double t_matrix[2][3];

// The scale example of the targetDP paper (§III-C), on a 3-vector SoA field: the same source
// as the host test's.
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
TARGET_ENTRY void count_visits(int* visits, size_t n) {
  size_t base;
  TARGET_TLP(base, n) {
    int v;
    for (v = 0; v < tdp_nv_; v++) atomicAdd(&visits[base + v], 1);
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

TEST_F(TargetDPCuda, ConstantsReachKernelsInLaunchOrder) {
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

TEST_F(TargetDPCuda, MaskedCopiesMoveOnlyTheSelectedSitesOfEveryField) {
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
