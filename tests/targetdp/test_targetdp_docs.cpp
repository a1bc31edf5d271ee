// The examples of docs/targetdp.md, word for word (docs.targetdp_example_matches checks).

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

// The kernel is indented as the docs checker expects of a test body.
// DOC targetdp-kernel begin
  TARGET_CONST double t_a;

  // field[iDim * n + site] *= a for a 3-vector field stored SoA.
  TARGET_ENTRY void scale(double* t_field, size_t n) {
    size_t baseIndex;
    TARGET_TLP(baseIndex, n) {  // this launch's chunks of VVL sites
      int iDim, vecIndex;
      for (iDim = 0; iDim < 3; iDim++) {
        TARGET_ILP(vecIndex) t_field[iDim * n + baseIndex + vecIndex] *= t_a;  // vectorised over sites
      }
    }
  }
// DOC targetdp-kernel end

TEST(TargetDPDocs, ScaleExample) {
  targetInit("sim:1");
  const size_t n = 1000;
  std::vector<double> field(3 * n, 2.0);
  // DOC targetdp-host begin
  double* t_field;
  const double a = 3.0;
  targetMalloc((void**)&t_field, 3 * n * sizeof(double));
  copyToTarget(t_field, field.data(), 3 * n * sizeof(double));
  copyConstantDoubleToTarget(&t_a, &a, sizeof(double));

  scale TARGET_LAUNCH(n)(t_field, n);
  syncTarget();

  copyFromTarget(field.data(), t_field, 3 * n * sizeof(double));
  targetFree(t_field);
  // DOC targetdp-host end
  for (double x : field) ASSERT_EQ(x, 6.0);
  targetFinalize();
}

}  // namespace
