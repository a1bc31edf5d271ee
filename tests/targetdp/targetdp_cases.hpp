#pragma once
// What the targetDP tests check on every target, compiled by g++ for the host and sim targets
// (test_targetdp.cpp) and by nvcc for a CUDA one (test_targetdp_cuda.cu): the same kernels from
// the same source, and the same checks of what they leave in target memory. Include it once per
// test program, after <tessera/targetdp.h> and <gtest/gtest.h>.

#include <cstddef>
#include <numeric>
#include <vector>

namespace targetdp_cases {

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

/// scale on a field of 3 * n values 1, 2, 3, ...: every value multiplied by the constant.
inline void check_scale(size_t n) {
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

/// Two launches of use_constants with a constant changed between them and no sync: each sees
/// the values copied before it was launched.
inline void check_constants_in_launch_order() {
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
  targetFree(t_out1);
  targetFree(t_out2);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out1[i], 10 + 0.9375 + 6 + i);
    ASSERT_EQ(out2[i], 1000 + 0.9375 + 6 + i);
  }
}

/// Masked copies both ways of a 3-field SoA array: only the selected sites of every field move.
inline void check_masked_copies() {
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

  // Back: the target now holds 100 + i everywhere; only masked sites of `back` change.
  std::vector<double> target_values(host.size());
  std::iota(target_values.begin(), target_values.end(), 100.0);
  copyToTarget(t_data, target_values.data(), target_values.size() * sizeof(double));
  std::vector<double> back(host.size(), -7.0);
  copyFromTargetMasked(back.data(), t_data, nsites, nfields, mask.data(), mask.size());
  targetFree(t_data);
  for (size_t f = 0; f < nfields; ++f)
    for (size_t s = 0; s < nsites; ++s) {
      ASSERT_EQ(all[f * nsites + s], mask[s] ? host[f * nsites + s] : 0.0) << "field " << f << " site " << s;
      ASSERT_EQ(back[f * nsites + s], mask[s] ? target_values[f * nsites + s] : -7.0) << "field " << f << " site " << s;
    }
}

}  // namespace targetdp_cases
